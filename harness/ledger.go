package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// LedgerVersion is the version of a turns.jsonl line.
const LedgerVersion = 1

// FindingKind names what the referee caught in a turn.
type FindingKind string

// The kinds of findings a ledger line holds.
const (
	FindingCompletionRejected FindingKind = "completion_rejected" // complete claimed with features pending
	FindingIllegalEdit        FindingKind = "illegal_edit"        // feature list or init.sh edited against the rules, restored
	FindingTampering          FindingKind = "tampering"           // state.json or git's hooks and config changed
	FindingVerification       FindingKind = "verification_failed" // a claimed flip failed init.sh or its verify command
	FindingPlanRejected       FindingKind = "plan_rejected"       // the initializer's list or init.sh was not accepted
	FindingNoDecision         FindingKind = "no_decision"         // no valid loop-state block
	FindingTimeout            FindingKind = "timeout"             // the turn ran out of time
	FindingAgentError         FindingKind = "agent_error"         // the agent failed
	FindingSetup              FindingKind = "setup_error"         // the agent cannot work (a refused key, an unknown model, no server): no retry changes it
	FindingRegression         FindingKind = "regression"          // a passing feature's check failed again; grub flipped it back
	FindingOther              FindingKind = "other"
)

// Caught reports whether a finding of kind k is a catch of the referee's:
// something the agent did that grub checked and refused. A timeout and an
// agent that failed (a model that cannot be reached, a program that
// crashed) or could not work at all (a setup error) are not: the turn
// failed before there was anything to referee. The report, status and
// history count the two apart.
func (k FindingKind) Caught() bool {
	return k != FindingTimeout && k != FindingAgentError && k != FindingSetup
}

// Finding is one thing the referee caught in a turn.
type Finding struct {
	Kind FindingKind `json:"kind"`
	Text string      `json:"text"`
}

// The results of a verification check in the ledger.
const (
	CheckPassed   = "passed"
	CheckFailed   = "failed"
	CheckTimedOut = "timed_out"
)

// CheckRecheck names, in the ledger, a passing feature's verify command
// run again by the regression sweep; CheckAudit one run by the completion
// audit, which records every check it ran (the command only of one that
// failed: the list holds the others'), so that the report and grub doctor
// show that the audit ran and what it checked.
const (
	CheckRecheck = "recheck"
	CheckAudit   = "audit"
)

// LedgerCheck is one check grub ran to verify a turn: init.sh or a
// feature's verify command.
type LedgerCheck struct {
	Name     string `json:"name"`              // "init.sh", "verify", CheckRecheck or CheckAudit
	Feature  string `json:"feature,omitempty"` // the feature a verify command or recheck is of
	Command  string `json:"command,omitempty"`
	Result   string `json:"result"` // CheckPassed, CheckFailed or CheckTimedOut
	ExitCode int    `json:"exitCode"`
	// DurationSeconds is how long the command ran (absent in lines
	// written before grub kept it).
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
}

// NewLedgerCheck is chk as the ledger records it under name.
func NewLedgerCheck(name string, chk Check) LedgerCheck {
	res := CheckFailed
	switch {
	case chk.TimedOut:
		res = CheckTimedOut
	case chk.Passed:
		res = CheckPassed
	}
	return LedgerCheck{Name: name, Command: chk.Command, Result: res, ExitCode: chk.ExitCode, DurationSeconds: chk.Duration.Seconds()}
}

// TurnUsage is what one turn used.
type TurnUsage struct {
	InputTokens       int64    `json:"inputTokens"`
	CachedInputTokens int64    `json:"cachedInputTokens"`
	OutputTokens      int64    `json:"outputTokens"`
	Requests          int64    `json:"requests"`
	Estimated         bool     `json:"estimated,omitempty"`
	CostUSD           *float64 `json:"costUSD,omitempty"`
}

// Tokens is what the turn counted against a token budget: input - cached
// input + output, as agent.Usage.Tokens.
func (u TurnUsage) Tokens() int64 { return u.InputTokens - u.CachedInputTokens + u.OutputTokens }

// TurnRecord is one line of turns.jsonl (schemas/turn-ledger.schema.json):
// the record of one turn, appended when the controller records it. The
// turn's commit is not in it (the commit comes after); readers join by
// iteration with the Grub-Iteration trailer of the history.
type TurnRecord struct {
	Version         int              `json:"version"`
	Iteration       int              `json:"iteration"`
	Phase           Phase            `json:"phase"`
	Feature         string           `json:"feature,omitempty"`
	Flipped         string           `json:"flipped,omitempty"`
	Decision        loopstate.Status `json:"decision"`
	Summary         string           `json:"summary"`
	Findings        []Finding        `json:"findings"`
	Checks          []LedgerCheck    `json:"checks"`
	DurationSeconds float64          `json:"durationSeconds"`
	Usage           TurnUsage        `json:"usage"`
	Passing         int              `json:"passing"`
	Total           int              `json:"total"`
	Status          Status           `json:"status"`
	StopReason      string           `json:"stopReason,omitempty"`
	// Refused are the hosts the network allowlist's proxy refused during
	// the turn (the agent, init.sh and the verify commands), by host.
	Refused []RefusedHost `json:"refused,omitempty"`
	Time    time.Time     `json:"time"`
}

// RefusedHost is a host grub's network proxy refused in a turn, and how
// many times.
type RefusedHost struct {
	Host  string `json:"host"`
	Count int    `json:"count"`
}

// FormatRefused is refused hosts as the progress log and the report show
// them: "example.org ×3, evil.example ×1".
func FormatRefused(r []RefusedHost) string {
	parts := make([]string, len(r))
	for i, h := range r {
		parts[i] = fmt.Sprintf("%s ×%d", h.Host, h.Count)
	}
	return strings.Join(parts, ", ")
}

// AppendTurn validates r and appends it as one line to the task's
// turns.jsonl, creating the file, and fsyncs it. The file is opened
// O_APPEND|O_NOFOLLOW: a symbolic link in its place is refused, never
// written through. A last line a crash left without its newline is ended
// first, so the new line stands on its own (the reader skips the torn one).
func (s *Store) AppendTurn(id string, r TurnRecord) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	if _, err := os.Stat(s.Dir(id)); errors.Is(err, fs.ErrNotExist) {
		return s.notFound(id)
	}
	path := s.Path(id, FileTurnLedger)
	rel := s.Rel(path)
	if r.Version == 0 {
		r.Version = LedgerVersion
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Checks == nil {
		r.Checks = []LedgerCheck{}
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode a line of %s: %w", rel, err)
	}
	if err := schemas.Validate(schemas.TurnLedger, rel, line); err != nil {
		return err
	}
	pre := stampNow(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|ledgerNoFollow, 0o644)
	if err != nil {
		return fmt.Errorf("append to %s: %w", rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("append to %s: %w", rel, err)
	} else if !fi.Mode().IsRegular() {
		return &NotRegularError{File: rel, Kind: kindOf(fi.Mode())}
	} else if n := fi.Size(); n > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, n-1); err != nil {
			return fmt.Errorf("append to %s: %w", rel, err)
		}
		if last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("append to %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append to %s: fsync: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return s.keepWritten(id, FileTurnLedger, pre)
}

// LoadTurns reads a task's turns.jsonl, checking every line against its
// schema, in file order. A task without the file (one an older grub ran)
// has no lines. A last line without its newline (a crash cut the append)
// is skipped; any other bad line is a *schemas.Error naming the file and
// line. A later line for the same iteration (a turn recorded again after
// a crash) is returned too: Latest keeps the last of each.
func (s *Store) LoadTurns(id string) ([]TurnRecord, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	path := s.Path(id, FileTurnLedger)
	data, err := s.readRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	return parseTurns(s.Rel(path), data)
}

func parseTurns(rel string, data []byte) ([]TurnRecord, error) {
	var out []TurnRecord
	for n := 1; len(data) > 0; n++ {
		line, rest, complete := bytes.Cut(data, []byte{'\n'})
		data = rest
		if !complete {
			break // torn by a crash
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		file := fmt.Sprintf("%s:%d", rel, n)
		var r TurnRecord
		if err := schemas.DecodeInto(schemas.TurnLedger, file, line, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// LatestTurns keeps the last line of each iteration, in iteration order.
func LatestTurns(rs []TurnRecord) []TurnRecord {
	last := map[int]int{}
	for i, r := range rs {
		last[r.Iteration] = i
	}
	out := make([]TurnRecord, 0, len(last))
	for i, r := range rs {
		if last[r.Iteration] == i {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b TurnRecord) int { return a.Iteration - b.Iteration })
	return out
}
