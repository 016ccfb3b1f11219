package chaos

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/cli"
	"github.com/grub-dev/grub/internal/failpoint"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/proc"
)

var (
	flagN          = flag.Int("chaos.n", 5, "kill -9 trials at random moments")
	flagConcurrent = flag.Int("chaos.concurrent", 5, "concurrent resumes of one task")
	flagSeed       = flag.Uint64("chaos.seed", 0, "seed of the random moments (0: from the clock)")
	flagFeatures   = flag.Int("chaos.features", 2, "features of each task (a task takes one turn more)")
	flagAt         = flag.String("chaos.at", "", "the turns whose failpoints TestFailpoints kills at, comma separated (default: the first and the last)")
)

// grubBin is this test binary under the name grub: TestMain runs grub's
// main when started by that name.
var grubBin string

// The counts TestMain prints.
var counts struct {
	trials, failpointTrials, randomTrials, kills, recovered, violations atomic.Int64
	resumes, ran, locked, otherExit                                     atomic.Int64
}

var seed uint64

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "grub" {
		os.Exit(cli.Main())
	}
	flag.Parse()
	seed = *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	dir, err := os.MkdirTemp("", "grub-chaos-")
	if err != nil {
		panic(err)
	}
	code := 1
	if err := installGrub(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	if counts.trials.Load() > 0 || counts.resumes.Load() > 0 {
		fmt.Printf("chaos: %d trials (%d kill -9 at random moments, %d kills in all; %d at failpoints), %d recovered, %d invariant violations; seed %d\n",
			counts.trials.Load(), counts.randomTrials.Load(), counts.kills.Load(), counts.failpointTrials.Load(),
			counts.recovered.Load(), counts.violations.Load(), seed)
	}
	if counts.resumes.Load() > 0 {
		fmt.Printf("chaos: %d concurrent resumes of one task: %d ran, %d exited 75, %d otherwise\n",
			counts.resumes.Load(), counts.ran.Load(), counts.locked.Load(), counts.otherExit.Load())
	}
	os.Exit(code)
}

// installGrub links (or copies) this test binary as dir/grub/bin/grub, so
// that os.Executable (grub's sandbox launcher and the fake agent) names
// grub too, and a home folder for git.
func installGrub(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	grubBin = filepath.Join(bin, "grub")
	if os.Link(exe, grubBin) == nil {
		return nil
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		return err
	}
	return os.WriteFile(grubBin, data, 0o755)
}

// env is the environment of every grub run: no failpoint unless added, no
// git settings of the developer's, and no second of sleep at exit under
// -race.
func env(home string, extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GRUB_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "XDG_STATE_HOME" || k == "GORACE" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1", "TZ=UTC",
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return append(out, extra...)
}

// workspace is a new git repository with one committed file, and
// the home folder its grub runs use.
type workspace struct {
	dir, home string
}

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	w := workspace{dir: filepath.Join(t.TempDir(), "ws"), home: t.TempDir()}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "README"), []byte("chaos\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The first commit is the user's: a kill during grub start's own
	// first commit is not a turn's (and leaves a work tree start calls
	// dirty).
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"commit", "-q", "-m", "the project"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = w.dir, env(w.home, "GIT_AUTHOR_NAME=chaos", "GIT_AUTHOR_EMAIL=chaos@localhost",
			"GIT_COMMITTER_NAME=chaos", "GIT_COMMITTER_EMAIL=chaos@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return w
}

// agentCmd is the fake agent (grub demo-agent) with its flags.
func agentCmd(flags string) string { return proc.ShellQuote(grubBin) + " demo-agent " + flags }

// startArgs starts a task of features features with the fake agent.
func startArgs(features int, agentFlags string) []string {
	return []string{"start", "make marker files", "--min-features", strconv.Itoa(features),
		"--agent-cmd", agentCmd(fmt.Sprintf("-features %d %s", features, agentFlags))}
}

// command is grub with args in the workspace.
func (w workspace) command(extraEnv []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(grubBin, args...)
	cmd.Dir, cmd.Env = w.dir, env(w.home, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// run runs grub to its end and returns its exit code and output.
func (w workspace) run(t *testing.T, extraEnv []string, args ...string) (int, string) {
	t.Helper()
	cmd, out := w.command(extraEnv, args...)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("grub %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// tasks lists the workspace's tasks (folders with a state.json).
func (w workspace) tasks() []string {
	matches, _ := filepath.Glob(filepath.Join(w.dir, harness.GrubDirName, "*", harness.FileState))
	var ids []string
	for _, m := range matches {
		ids = append(ids, filepath.Base(filepath.Dir(m)))
	}
	return ids
}

func (w workspace) task(t *testing.T) string {
	t.Helper()
	ids := w.tasks()
	if len(ids) != 1 {
		t.Fatalf("%d tasks in the workspace, want 1: %v", len(ids), ids)
	}
	return ids[0]
}

var (
	headingRE  = regexp.MustCompile(`(?m)^## Turn (\d+): `)
	decisionRE = regexp.MustCompile(`(?m)^- Decision: (\S+)`)
)

// turnStatuses are the decisions of a turn's own entry; the others
// (edit, steer, reconciled, answer) are events logged between turns.
var turnStatuses = map[string]bool{"continue": true, "complete": true, "blocked": true, "failed": true, "cancelled": true, "unknown": true}

// logTurns counts the turn entries of the progress log by iteration.
func logTurns(data string) map[int]int {
	n := map[int]int{}
	locs := headingRE.FindAllStringSubmatchIndex(data, -1)
	for i, loc := range locs {
		end := len(data)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		it, _ := strconv.Atoi(data[loc[2]:loc[3]])
		if m := decisionRE.FindStringSubmatch(data[loc[1]:end]); m != nil && turnStatuses[m[1]] {
			n[it]++
		}
	}
	return n
}

// check reports what breaks the invariant in task id of the workspace:
// never two progress-log entries or two commits of one turn, nor one of a
// turn state has not started; and once done (the task ran to its end),
// exactly one of each for every turn, a complete task, nothing awaiting,
// no record pending but the last turn's, and a clean work tree.
func (w workspace) check(id string, done bool) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	store, err := harness.Open(w.dir)
	if err != nil {
		return []string{err.Error()}
	}
	st, err := store.LoadState(id)
	if err != nil {
		return []string{"state.json: " + err.Error()}
	}
	n := st.CurrentIteration
	if done {
		// The last turn's record stays in state (as committed): it is
		// that turn's, and the counts below say it is written.
		if st.Status != harness.StatusComplete || st.AwaitingTurn || st.RecordPending != nil && st.RecordPending.Iteration != n {
			bad("state not settled: status %s (%s), awaitingTurn %v, recordPending %+v", st.Status, st.StopReason, st.AwaitingTurn, st.RecordPending)
		}
	}
	data, err := os.ReadFile(store.Path(id, harness.FileProgressLog))
	if err != nil {
		return append(problems, err.Error())
	}
	entries := logTurns(string(data))
	repo, err := gitx.Open(w.dir)
	if err != nil {
		return append(problems, err.Error())
	}
	hist, err := repo.History(id)
	if err != nil {
		return append(problems, err.Error())
	}
	if done {
		// A finished run leaves a clean work tree: the last commit holds
		// state as it is.
		if dirty, err := repo.Dirty(); err != nil || len(dirty) > 0 {
			bad("the work tree is not clean after the run: %v %v", dirty, err)
		}
	}
	commits := map[int]int{}
	for _, h := range hist {
		commits[h.Iteration]++
	}
	for _, kind := range []struct {
		name string
		seen map[int]int
	}{{"progress-log entries", entries}, {"commits", commits}} {
		for it, c := range kind.seen {
			if c > 1 || it < 1 || it > n {
				bad("turn %d has %d %s (state is at turn %d)", it, c, kind.name, n)
			}
		}
		if !done {
			continue
		}
		for it := 1; it <= n; it++ {
			if kind.seen[it] != 1 {
				bad("turn %d has %d %s, want 1", it, kind.seen[it], kind.name)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// report counts a trial and fails the test with its problems.
func report(t *testing.T, problems []string, log string) {
	t.Helper()
	counts.trials.Add(1)
	if len(problems) > 0 {
		counts.violations.Add(1)
		t.Errorf("invariant broken:\n%s\n--- grub's output:\n%s", strings.Join(problems, "\n"), log)
		return
	}
	counts.recovered.Add(1)
}

// TestFailpoints kills grub at every failpoint of a turn (in the turns
// -chaos.at names: by default the initializer turn and the last one; and
// again while the next run finishes the recovery), resumes it to the end, and checks
// that every turn has exactly one progress-log entry and one commit.
func TestFailpoints(t *testing.T) {
	t.Parallel()
	type trial struct {
		name  string
		kills []string // the failpoint of each run before the last, clean one
	}
	last := *flagFeatures + 1
	turns := []int{1, last}
	if *flagAt != "" {
		turns = nil
		for _, f := range strings.Split(*flagAt, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > last {
				t.Fatalf("-chaos.at: %q is not a turn from 1 to %d", f, last)
			}
			turns = append(turns, n)
		}
	}
	var trials []trial
	for _, fp := range failpoint.Names {
		for _, at := range turns {
			trials = append(trials, trial{fmt.Sprintf("%s@%d", fp, at), []string{fmt.Sprintf("%s@%d", fp, at)}})
		}
	}
	// A kill while a run finishes what the last one left: the unknown
	// turn's record, a pending record.
	for _, k := range [][]string{
		{failpoint.TurnStarted + "@2", failpoint.LogAppended + "@1"},
		{failpoint.AgentReturned + "@" + strconv.Itoa(last), failpoint.Committed + "@1"},
		{failpoint.RecordSaved + "@2", failpoint.ChecklistSaved + "@1"},
		{failpoint.LogAppended + "@" + strconv.Itoa(last), failpoint.LogAppended + "@1"},
	} {
		trials = append(trials, trial{strings.Join(k, ",then,"), k})
	}
	for _, tc := range trials {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counts.failpointTrials.Add(1)
			w := newWorkspace(t)
			var log strings.Builder
			for i, fp := range tc.kills {
				args := startArgs(*flagFeatures, "")
				if i > 0 {
					args = []string{"resume", w.task(t)}
				}
				code, out := w.run(t, []string{failpoint.Env + "=" + fp}, args...)
				log.WriteString(out)
				if code != failpoint.ExitCode {
					report(t, []string{fmt.Sprintf("grub %s with %s exited %d, want %d (the failpoint)", args[0], fp, code, failpoint.ExitCode)}, log.String())
					return
				}
				if p := w.check(w.task(t), false); len(p) > 0 {
					report(t, p, log.String())
					return
				}
			}
			id := w.task(t)
			code, out := w.run(t, nil, "resume", id)
			log.WriteString(out)
			if code != 0 {
				report(t, []string{fmt.Sprintf("grub resume exited %d, want 0", code)}, log.String())
				return
			}
			report(t, w.check(id, true), log.String())
		})
	}
}

// TestChaos kills grub with kill -9 at random moments, resuming after
// each kill until the task completes, and checks the invariant after every
// kill and at the end (-chaos.n trials); then starts -chaos.concurrent
// resumes of one task at once: exactly one runs, the others exit 75.
func TestChaos(t *testing.T) {
	t.Parallel()
	// How long a whole run takes here (without -race it is much
	// shorter): kills fall anywhere in it.
	w := newWorkspace(t)
	began := time.Now()
	if code, out := w.run(t, nil, startArgs(*flagFeatures, "")...); code != 0 {
		t.Fatalf("a clean run exited %d\n%s", code, out)
	}
	span := time.Since(began)
	t.Logf("a clean run takes %s", span)
	t.Run("random", func(t *testing.T) {
		for i := range *flagN {
			r := rand.New(rand.NewPCG(seed, uint64(i)))
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				randomTrial(t, r, span)
			})
		}
	})
	t.Run("concurrent", func(t *testing.T) { concurrentResumes(t, *flagConcurrent) })
}

// randomTrial runs a task, killing grub after a random delay below span
// and resuming it, until a run ends by itself.
func randomTrial(t *testing.T, rng *rand.Rand, span time.Duration) {
	counts.randomTrials.Add(1)
	w := newWorkspace(t)
	var log strings.Builder
	for attempt := 0; ; attempt++ {
		if attempt == 50 {
			report(t, []string{fmt.Sprintf("not complete after %d runs", attempt)}, log.String())
			return
		}
		args := startArgs(*flagFeatures, "")
		if ids := w.tasks(); len(ids) == 1 {
			args = []string{"resume", ids[0]}
		} else if len(ids) > 1 {
			t.Fatalf("%d tasks: %v\n%s", len(ids), ids, log.String())
		}
		// The first attempt is nearly always killed; later ones may run
		// longer, so that a trial ends even when the machine is slower
		// than when span was measured.
		delay := time.Duration(rng.Int64N(int64(span) * int64(2+attempt) / 4))
		cmd, out := w.command(nil, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
		_ = cmd.Wait()
		timer.Stop()
		fmt.Fprintf(&log, "--- grub %s, kill after %s:\n%s", args[0], delay, out)
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			counts.kills.Add(1)
			if ids := w.tasks(); len(ids) == 1 {
				if p := w.check(ids[0], false); len(p) > 0 {
					report(t, p, log.String())
					return
				}
			}
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			report(t, []string{fmt.Sprintf("grub %s exited %d, want 0", args[0], code)}, log.String())
			return
		}
		report(t, w.check(w.task(t), true), log.String())
		return
	}
}

// concurrentResumes starts n resumes of one task at once, while its next
// turn is slow: exactly one runs it to the end, the others exit 75.
func concurrentResumes(t *testing.T, n int) {
	w := newWorkspace(t)
	// Stop after the first turn (its record finished, so the next run
	// only checks it), leaving a slow turn next.
	slow := time.Second + time.Duration(n)*150*time.Millisecond
	code, out := w.run(t, []string{failpoint.Env + "=" + failpoint.Committed}, startArgs(1, fmt.Sprintf("-plan 2:slow -sleep %s", slow))...)
	if code != failpoint.ExitCode {
		t.Fatalf("grub start exited %d\n%s", code, out)
	}
	id := w.task(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	codes := make([]int, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd, out := w.command(nil, "resume", id)
			if err := cmd.Start(); err != nil {
				codes[i], outs[i] = -1, err.Error()
				return
			}
			go func() { <-ctx.Done(); _ = cmd.Process.Kill() }()
			_ = cmd.Wait()
			codes[i], outs[i] = cmd.ProcessState.ExitCode(), out.String()
		}()
	}
	wg.Wait()
	ran, locked := 0, 0
	for i, c := range codes {
		counts.resumes.Add(1)
		switch c {
		case 0:
			ran++
			counts.ran.Add(1)
		case 75:
			locked++
			counts.locked.Add(1)
		default:
			counts.otherExit.Add(1)
			t.Errorf("resume %d exited %d:\n%s", i, c, outs[i])
		}
	}
	if ran != 1 || locked != n-1 {
		t.Errorf("%d resumes ran and %d exited 75; want 1 and %d", ran, locked, n-1)
	}
	if p := w.check(id, true); len(p) > 0 {
		t.Errorf("invariant broken after the concurrent resumes:\n%s", strings.Join(p, "\n"))
	}
}
