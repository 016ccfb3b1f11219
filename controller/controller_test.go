package controller

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/fakeagent"
)

// The test binary doubles as the fake agent program: with GRUB_FAKEAGENT
// set it runs fakeagent.Main instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("GRUB_FAKEAGENT") == "1" {
		os.Exit(fakeagent.Main())
	}
	os.Exit(m.Run())
}

// fakeCmd is an --agent-cmd running this test binary as the fake agent.
func fakeCmd(t *testing.T, args string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "GRUB_FAKEAGENT=1 " + shellQuote(exe) + " " + args
}

type run struct {
	t      *testing.T
	store  *harness.Store
	id     string
	stderr bytes.Buffer
}

func newTask(t *testing.T, mutate func(*harness.State)) *run {
	t.Helper()
	store, err := harness.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &harness.State{Goal: "make marker files", Locale: "en", Status: harness.StatusRunning,
		Phase: harness.PhaseInitializer, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: "command"}}
	st.Limits.MinFeatures = 2
	st.Limits.InitTimeoutSeconds = 20
	st.Limits.TurnTimeoutSeconds = 60
	if mutate != nil {
		mutate(st)
	}
	if err := store.Create(st); err != nil {
		t.Fatal(err)
	}
	return &run{t: t, store: store, id: st.ID}
}

func (r *run) run(ctx context.Context, agentArgs string, lim harness.LimitChanges) (*harness.State, error) {
	return Run(ctx, Options{Store: r.store, TaskID: r.id, Agent: agent.NewCommand(fakeCmd(r.t, agentArgs)),
		Progress: &r.stderr, Limits: lim, Heartbeat: time.Hour})
}

func (r *run) log() string {
	b, _ := os.ReadFile(r.store.Path(r.id, harness.FileProgressLog))
	return string(b)
}

func TestHonestAgentCompletes(t *testing.T) {
	r := newTask(t, nil)
	st, err := r.run(context.Background(), "-features 3", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete {
		t.Fatalf("status %s (%s), want complete\n%s", st.Status, st.StopReason, r.stderr.String())
	}
	if st.CurrentIteration != 4 || st.FeatureListBaseline.Passing() != 3 {
		t.Fatalf("iteration %d, passing %d", st.CurrentIteration, st.FeatureListBaseline.Passing())
	}
	if st.AwaitingTurn || st.ConsecutiveFailures != 0 {
		t.Fatalf("state not settled: %+v", st)
	}
	if !strings.Contains(r.log(), "Turn 4") {
		t.Errorf("progress log lacks turn 4:\n%s", r.log())
	}
	if !strings.Contains(r.stderr.String(), "turn 2/25 started") {
		t.Errorf("no progress line: %s", r.stderr.String())
	}
}

func TestRefereeRejectsCheats(t *testing.T) {
	cases := []struct {
		behaviour string
		failure   string
	}{
		{"edit-description", "description"},
		{"add-feature", "bonus"},
		{"two-flips", "flipped"},
		{"flip-no-evidence", "evidence"},
		{"verify-fail", "verify"},
		{"no-loop-state", "loop-state"},
		{"bad-loop-state", "loop-state"},
		{"write-state", "state.json"},
		{"fail", "exited with code 3"},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			st, err := r.run(context.Background(), "-features 2 -plan 2:"+c.behaviour, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != harness.StatusComplete {
				t.Fatalf("status %s (%s)", st.Status, st.StopReason)
			}
			if st.CurrentIteration != 4 {
				t.Errorf("iterations = %d, want 4 (init, rejected turn, two honest turns)", st.CurrentIteration)
			}
			log := r.log()
			if !strings.Contains(log, c.failure) {
				t.Errorf("progress log does not name %q:\n%s", c.failure, log)
			}
			prompt, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0003.prompt.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(prompt), c.failure) {
				t.Errorf("next prompt does not carry the failure %q", c.failure)
			}
		})
	}
}
