package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

// This file holds what grub doctor needs from the harness: reading the
// progress log back, decoding a state.json found elsewhere (a commit),
// setting a damaged file aside and writing a rebuilt one.

// turnHeading matches the heading of a progress-log entry:
// "## Turn 3: execution, feature `x`".
var turnHeading = regexp.MustCompile(`^## Turn ([0-9]+):`)

// turnDecisions are the decisions of an entry that records a turn; the
// other entries (edits, steering, answers, reconciliations) share the
// heading but are not turns.
var turnDecisions = map[string]bool{
	string(loopstate.Continue): true, string(loopstate.Complete): true, string(loopstate.Blocked): true,
	string(loopstate.Failed): true, string(loopstate.Cancelled): true, string(loopstate.Unknown): true,
}

// LoggedTurns reads a task's progress-log.md and counts its turn entries
// by iteration (a turn logged twice counts 2). A missing log has none.
func (s *Store) LoggedTurns(id string) (map[int]int, error) {
	data, err := s.readRegular(s.Path(id, FileProgressLog))
	if errors.Is(err, fs.ErrNotExist) {
		return map[int]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	turns := map[int]int{}
	iter := -1 // the iteration of the entry being read, -1 outside one
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			iter = -1
			if m := turnHeading.FindStringSubmatch(line); m != nil {
				iter, _ = strconv.Atoi(m[1])
			}
			continue
		}
		if d, ok := strings.CutPrefix(line, "- Decision: "); ok && iter >= 0 {
			if turnDecisions[strings.TrimSpace(d)] {
				turns[iter]++
			}
			iter = -1
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Rel(s.Path(id, FileProgressLog)), err)
	}
	return turns, nil
}

// LogGoal is the goal the header of a task's progress-log.md quotes; ""
// when the log or its header is gone.
func (s *Store) LogGoal(id string) string {
	data, err := s.readRegular(s.Path(id, FileProgressLog))
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "Goal:" {
			continue
		}
		var goal []string
		for _, q := range lines[i+1:] {
			switch {
			case q == ">":
				goal = append(goal, "")
			case strings.HasPrefix(q, "> "):
				goal = append(goal, q[2:])
			case strings.TrimSpace(q) == "" && len(goal) == 0:
				continue
			default:
				return strings.TrimSpace(strings.Join(goal, "\n"))
			}
		}
		return strings.TrimSpace(strings.Join(goal, "\n"))
	}
	return ""
}

// DecodeState validates and decodes data as the state.json of task id
// (from a commit, say), as LoadState does with the file.
func (s *Store) DecodeState(id string, data []byte) (*State, error) {
	return s.decodeState(id, data)
}

// CommittedRecord reads a state.json of task id that a turn commit holds
// (data): the pending record of its own turn (nil when it holds none) and
// its history mark, the commit before (nil when it has none). grub
// commits a turn with the state that holds the turn's record, its ledger
// line included, so the record names what grub verified in that turn,
// whatever the commit's trailers say. The state is read strictly as
// DecodeState reads it, but its accepted list is not loaded (a clone has
// no accepted list's files).
func (s *Store) CommittedRecord(id string, data []byte) (*PendingRecord, *HistoryMark) {
	var st State
	if schemas.DecodeInto(schemas.State, s.Rel(s.Path(id, FileState)), data, &st) != nil || st.ID != id {
		return nil, nil
	}
	if p := st.RecordPending; p != nil && p.Iteration == st.CurrentIteration {
		return p, st.History
	}
	return nil, st.History
}

// SetAside renames a damaged file of task id (whatever it is: a corrupt
// file, a folder, a link) to <name>.damaged-<time>, so that a repair never
// destroys what was there, and returns the new path relative to the
// workspace. The task folder's .gitignore keeps it out of commits.
func (s *Store) SetAside(id, name string, now time.Time) (string, error) {
	to := s.Path(id, name+".damaged-"+now.UTC().Format("20060102T150405Z"))
	if err := os.Rename(s.Path(id, name), to); err != nil {
		return "", fmt.Errorf("set %s aside: %w", s.Rel(s.Path(id, name)), err)
	}
	return s.Rel(to), atomicfile.SyncDir(s.Dir(id))
}

// RestoreFile writes data as the tracked file name of task id, atomically
// (grub doctor --repair restores a lost file from git). init.sh is made
// executable.
func (s *Store) RestoreFile(id, name string, data []byte) error {
	perm := os.FileMode(0o644)
	if name == FileInitScript {
		perm = 0o755
	}
	return atomicfile.WriteFile(s.Path(id, name), data, perm)
}

// RebuildState is the state of task id rebuilt from what is left when
// neither state.json nor a commit of it is: the goal, the feature list
// (nil when there is none: the initializer runs again) and the number of
// turns the progress log records. Everything else takes its default: the
// limits, the agent (openai, grub start's default), no usage counted. The
// task is left paused, with a stop reason that says so.
func RebuildState(id, goal string, list *featurelist.List, iterations int, now time.Time) *State {
	st := &State{
		Version: StateVersion, ID: id, Goal: goal, Locale: "en",
		Status: StatusPaused, Phase: PhaseInitializer,
		CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
		CurrentIteration: iterations,
		Limits:           DefaultLimits(),
		Agent:            Agent{Kind: AgentOpenAI},
		StopReason:       "state.json rebuilt by grub doctor --repair from the feature list and the progress log",
	}
	if list != nil {
		st.Phase = PhaseExecution
		st.FeatureListBaseline = list
	}
	if st.Limits.MaxIterations <= iterations {
		st.Limits.MaxIterations = iterations + DefaultLimits().MaxIterations
	}
	return st
}

// ProgressLogHeader is the header of a new progress log, for a lost one.
func ProgressLogHeader(id, goal string) string { return templates.ProgressLogHeader(id, goal) }
