package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// checking is an agent with a check before the first turn (agent.Checker).
type checking struct {
	agent.Agent
	check func(ctx context.Context) (string, error)
}

func (c checking) Check(ctx context.Context) (string, error) { return c.check(ctx) }

// longCause is a setup error's cause whose end is what matters, longer
// than any status line.
var longCause = "GET http://127.0.0.1:9/v1/models: Get \"http://127.0.0.1:9/v1/models\": " + strings.Repeat("dial tcp 127.0.0.1:9: ", 8) + "connect: connection refused"

var unreachable = &agent.SetupError{Cause: longCause, Fix: "nothing answers at http://127.0.0.1:9/v1: start the server, or check --base-url (OPENAI_BASE_URL)"}

// A setup error found before the first turn pauses the task with the cause
// and the fix in full: no turn runs, nothing is logged or committed.
func TestPreflightSetupErrorPausesBeforeTheFirstTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	turns := 0
	a := checking{
		Agent: agentFunc(func(context.Context, agent.Turn) (agent.Result, error) { turns++; return agent.Result{}, nil }),
		check: func(context.Context) (string, error) { return "", unreachable },
	}
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("err = %v, want ErrSetup", err)
	}
	want := "the agent cannot work (before the first turn): " + longCause + ". To fix: " + unreachable.Fix + "; then grub resume " + r.id + " carries on"
	if st.Status != harness.StatusPaused || st.StopReason != want {
		t.Errorf("status %s, stop reason %q; want paused, %q", st.Status, st.StopReason, want)
	}
	if turns != 0 || st.CurrentIteration != 0 || len(r.commits.commits) != 0 || strings.Contains(r.log(), "## Turn") {
		t.Errorf("a turn was spent: %d runs, iteration %d, %d commits, log:\n%s", turns, st.CurrentIteration, len(r.commits.commits), r.log())
	}
	if !strings.Contains(r.stderr.String(), "task "+r.id+" paused: "+want+"\n") {
		t.Errorf("progress lines do not say the whole reason:\n%s", r.stderr.String())
	}
	saved, err := r.store.LoadState(r.id)
	if err != nil || saved.Status != harness.StatusPaused || saved.StopReason != want {
		t.Errorf("state.json: %+v, %v", saved, err)
	}
}

// Any other error of the check is a doubt: said, and the run goes on.
func TestPreflightDoubtGoesOn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	a := checking{Agent: r.agent("-features 2"), check: func(context.Context) (string, error) {
		return "", errors.New("the server does not list the model \"m\"")
	}}
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("status %s, err %v, want complete\n%s", st.Status, err, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "agent check: the server does not list the model \"m\"; going on") {
		t.Errorf("the doubt is not said:\n%s", r.stderr.String())
	}
}

// setupIn is the fake agent, with the key refused from turn n on.
func (r *run) setupIn(n int, before func(t agent.Turn)) agent.Agent {
	fake := r.agent("-features 2")
	return agentFunc(func(ctx context.Context, t agent.Turn) (agent.Result, error) {
		if t.Iteration < n {
			return fake.RunTurn(ctx, t)
		}
		if before != nil {
			before(t)
		}
		return agent.Result{}, &agent.SetupError{Cause: "model request 1: HTTP 401: Incorrect API key provided", Fix: "check OPENAI_API_KEY"}
	})
}

// A setup error in a turn that changed nothing gives the turn back: the
// run stops there, the iteration is not counted, and the turn gets no
// entry, ledger line or commit.
func TestSetupErrorInATurnGivesItBack(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	st, err := r.runAgent(context.Background(), r.setupIn(2, nil), harness.LimitChanges{})
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("err = %v, want ErrSetup\n%s", err, r.stderr.String())
	}
	want := "the agent cannot work (in turn 2, not counted: it changed nothing): model request 1: HTTP 401: Incorrect API key provided. To fix: check OPENAI_API_KEY; then grub resume " + r.id + " carries on"
	if st.Status != harness.StatusPaused || st.StopReason != want {
		t.Errorf("status %s, stop reason %q; want paused, %q", st.Status, st.StopReason, want)
	}
	if st.CurrentIteration != 1 || st.AwaitingTurn || st.ConsecutiveFailures != 0 || st.LastError != "" {
		t.Errorf("state after the turn given back: iteration %d, awaiting %v, failures %d, last error %q", st.CurrentIteration, st.AwaitingTurn, st.ConsecutiveFailures, st.LastError)
	}
	if n := len(r.commits.commits); n != 1 {
		t.Errorf("%d commits, want turn 1's only", n)
	}
	if n := len(r.ledger()); n != 1 || strings.Count(r.log(), "## Turn") != 1 {
		t.Errorf("%d ledger lines, log:\n%s\nwant turn 1's only", n, r.log())
	}
	if strings.Contains(r.stderr.String(), "turn 2/25 ended") || !strings.Contains(r.stderr.String(), "paused: "+want) {
		t.Errorf("progress:\n%s", r.stderr.String())
	}
	// The key fixed, resume carries on with turn 2 and completes: one
	// entry, ledger line and commit per turn.
	st, err = r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete || st.CurrentIteration != 3 {
		t.Fatalf("resume: status %s, iteration %d, err %v\n%s", st.Status, st.CurrentIteration, err, r.stderr.String())
	}
	lines := r.ledger()
	if len(lines) != 3 || lines[1].Iteration != 2 || len(r.commits.commits) != 3 || strings.Count(r.log(), "## Turn") != 3 {
		t.Errorf("after resume: %d ledger lines, %d commits, log:\n%s", len(lines), len(r.commits.commits), r.log())
	}
}

// A setup error in a turn that changed the workspace records the turn (its
// work is refereed and committed, as any cut-short turn's), not counted
// as a failure nor as a catch, and the run stops there.
func TestSetupErrorAfterChangesRecordsTheTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	a := r.setupIn(2, func(t agent.Turn) {
		_ = os.WriteFile(filepath.Join(t.Workspace, "half.txt"), []byte("half done\n"), 0o644)
	})
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if !errors.Is(err, ErrSetup) {
		t.Fatalf("err = %v, want ErrSetup\n%s", err, r.stderr.String())
	}
	if st.Status != harness.StatusPaused || !strings.HasPrefix(st.StopReason, "the agent cannot work (in turn 2): model request 1: HTTP 401") {
		t.Errorf("status %s, stop reason %q", st.Status, st.StopReason)
	}
	if st.CurrentIteration != 2 || st.ConsecutiveFailures != 0 || len(r.commits.commits) != 2 {
		t.Errorf("iteration %d, failures %d, %d commits; want turn 2 recorded, not failed", st.CurrentIteration, st.ConsecutiveFailures, len(r.commits.commits))
	}
	lines := r.ledger()
	// Its finding says why (a setup error, never a catch of the
	// referee's), and the views show the turn failed.
	if len(lines) != 2 || len(lines[1].Findings) != 1 || lines[1].Findings[0].Kind != harness.FindingSetup ||
		lines[1].Findings[0].Kind.Caught() || lines[1].Outcome() != harness.OutcomeFailed {
		t.Errorf("ledger: %+v; want turn 2 with a setup_error finding only, failed", lines)
	}
}

// The cause of an error comes last; progress lines and stop reasons show
// it whole, however long the message.
func TestLongCauseIsNeverCut(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxInitializerFailures = 1 })
	a := agentFunc(func(context.Context, agent.Turn) (agent.Result, error) {
		return agent.Result{}, errors.New("model request 1: model request failed after 5 retries: " + longCause)
	})
	st, err := r.runAgent(context.Background(), a, harness.LimitChanges{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != harness.StatusFailed || !strings.HasSuffix(st.StopReason, longCause) {
		t.Errorf("status %s, stop reason %q: want failed, ending with the whole cause", st.Status, st.StopReason)
	}
	ended := "failed: the agent failed: model request 1: model request failed after 5 retries: " + longCause + "; 0/0 features pass"
	if !strings.Contains(r.stderr.String(), ended) {
		t.Errorf("the turn's end line cuts the cause:\n%s", r.stderr.String())
	}
}
