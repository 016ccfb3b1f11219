package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/bench/fixture"
	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
)

// BenchmarkStatusJSON2000 is grub status --json on a task of 2,000
// features with a 50 MB progress log (bench/status.sh compares the grub
// binary with jq on the same task).
func BenchmarkStatusJSON2000(b *testing.B) {
	benchStatusJSON(b, 2000, 1_000_000)
}

// benchStatusJSON runs status on a new task each time (a different goal,
// so a different list): schemas remembers the lists it found valid, and
// one grub status process meets its task's list for the first time.
func benchStatusJSON(b *testing.B, features int, logBytes int64) {
	var dirs, ids []string
	for i := range b.N {
		dir := b.TempDir()
		id, err := fixture.Write(dir, fixture.Options{Features: features, Passing: -1, LogBytes: logBytes,
			Goal: fmt.Sprintf("benchmark %d: leave one marker file per feature", i)})
		if err != nil {
			b.Fatal(err)
		}
		dirs, ids = append(dirs, dir), append(ids, id)
	}
	ios, _, _, _ := TestIOStreams()
	ios.Out = io.Discard
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		opts := &StatusOptions{IO: ios, Store: func() (*harness.Store, error) { return harness.Open(dirs[i]) },
			Now: time.Now, JSON: true, ID: ids[i]}
		if err := statusRun(opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurn is grub's own work per execution turn, everything but the
// agent (the referee, init.sh, the verify command and the regression
// sweep's three rechecks at its default, the record, the commit), with
// the in-process fake agent doing honest work and the cli's committer on a
// real git repository. ns/op is the whole turn; grub-ms/turn leaves the
// agent's time out; prompt-B is the size of the last turn's prompt.
// bench/all.sh runs a shell loop doing the same init.sh, four checks and
// git commit work.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{10, 2000} {
		b.Run(fmt.Sprintf("features=%d", n), func(b *testing.B) { benchTurns(b, n) })
	}
}

// timedAgent sums the time its agent spends in turns.
type timedAgent struct {
	agent.Agent
	spent time.Duration
}

func (t *timedAgent) RunTurn(ctx context.Context, turn agent.Turn) (agent.Result, error) {
	start := time.Now()
	defer func() { t.spent += time.Since(start) }()
	return t.Agent.RunTurn(ctx, turn)
}

func benchTurns(b *testing.B, features int) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git binary to make the repository")
	}
	dir := b.TempDir()
	// Enough features pending that every turn has one to implement.
	id, err := fixture.Write(dir, fixture.Options{Features: features + b.N, Passing: features / 2, MaxIter: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "fixture"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	store, err := harness.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	store.Private = b.TempDir()
	st, err := store.LoadState(id)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := openRepo(dir)
	if err != nil {
		b.Fatal(err)
	}
	fake, err := fakeagent.New()
	if err != nil {
		b.Fatal(err)
	}
	ag := &timedAgent{Agent: fake}
	turns := b.N
	more := turns
	opts := controller.Options{Store: store, TaskID: id, Agent: ag, Limits: harness.LimitChanges{MaxIterations: &more},
		Committer: gitCommitter{repo: repo, store: store}, Changes: gitChanges{repo}, GitGuard: gitGuard{repo},
		// What a real run checks every turn too: the history only grows,
		// and nothing the turn started is left (the scans of /proc; the
		// benchmark is not a subreaper, so nothing is adopted).
		History: gitHistory{repo, store, id}, Reaper: procReaper{}}
	*opts.Limits.MaxIterations = st.CurrentIteration + turns
	b.ResetTimer()
	start := time.Now()
	final, err := controller.Run(context.Background(), opts)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if got := final.CurrentIteration - st.CurrentIteration; got != turns || final.ConsecutiveFailures != 0 {
		b.Fatalf("ran %d turns (%d failing in a row, %s), want %d", got, final.ConsecutiveFailures, final.LastError, turns)
	}
	b.ReportMetric(float64(elapsed-ag.spent)/float64(turns)/1e6, "grub-ms/turn")
	prompt, err := os.ReadFile(store.Path(id, fmt.Sprintf("turns/%04d.prompt.md", final.CurrentIteration)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(prompt)), "prompt-B")
}
