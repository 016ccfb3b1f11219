package controller

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// listCommitter is a Committer that keeps the feature list each commit
// would hold: the file's bytes when Commit is called.
type listCommitter struct {
	recorder
	store *harness.Store
	mu    sync.Mutex
	lists map[int][]byte
}

func (l *listCommitter) Commit(ctx context.Context, c Commit) (CommitReport, error) {
	data, _ := os.ReadFile(l.store.Path(c.TaskID, harness.FileFeatureList))
	l.mu.Lock()
	if l.lists == nil {
		l.lists = map[int][]byte{}
	}
	l.lists[c.Iteration] = data
	l.mu.Unlock()
	return l.recorder.Commit(ctx, c)
}

// crashMidTurn leaves the task as a runner killed during turn n+1 would:
// awaitingTurn set, after keepRecord and the other steps of prepareTurn,
// then the agent's edits (edit).
func (r *run) crashMidTurn(edit func()) {
	r.t.Helper()
	st, err := r.store.LoadState(r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.store.KeepRecord(r.id); err != nil {
		r.t.Fatal(err)
	}
	st.CurrentIteration++
	st.AwaitingTurn = true
	st.RecordPending = nil
	if err := r.store.SaveState(st); err != nil {
		r.t.Fatal(err)
	}
	edit()
}

// The turn a crash cut short is recorded and committed only after the
// feature list it left is reconciled: an illegal edit (two flips at once,
// a description made easier) never reaches the recovery commit.
func TestRecoveryCommitHoldsTheAcceptedList(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	accepted, _, err := r.store.LoadFeatureList(r.id)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := featurelist.Marshal(accepted)
	path := r.store.Path(r.id, harness.FileFeatureList)
	r.crashMidTurn(func() {
		data, _ := os.ReadFile(path)
		cheat := strings.ReplaceAll(string(data), `"passes": false`, `"passes": true`)
		cheat = strings.Replace(cheat, "proving feature 1 works", "proving nothing", 1)
		if cheat == string(data) {
			t.Fatalf("no cheat made in:\n%s", data)
		}
		if err := os.WriteFile(path, []byte(cheat), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	lc := &listCommitter{store: r.store}
	lc.commits = r.commits.commits
	three := 3
	_, err = Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2 -default idle"), Clock: r.clock,
		Progress: &r.stderr, Limits: harness.LimitChanges{MaxIterations: &three}, Heartbeat: 1 << 62, Committer: lc})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	got, ok := lc.lists[2]
	if !ok {
		t.Fatalf("no recovery commit of turn 2: %+v", lc.commits)
	}
	if string(got) != string(want) {
		t.Errorf("the recovery commit holds a list grub never accepted:\n%s", got)
	}
	if !strings.Contains(r.log(), "description changed") {
		t.Errorf("the log does not say why the list was restored:\n%s\n%s", r.log(), r.stderr.String())
	}
}

// A turn a crash cut short that rewrote the ledger has it put back by the
// run that recovers it, and its entry names the file.
func TestRecoveryRestoresTheRecord(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	ledger := r.store.Path(r.id, harness.FileTurnLedger)
	before, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	r.crashMidTurn(func() {
		if err := os.WriteFile(ledger, []byte(strings.ReplaceAll(string(before), `"plan_rejected"`, `"other"`)+"{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	two := 2
	if _, err := r.run(context.Background(), "-features 2 -default idle", harness.LimitChanges{MaxIterations: &two}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	after, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(after), string(before)) {
		t.Errorf("the ledger grub wrote was not put back:\n%s", after)
	}
	if !strings.Contains(r.log(), "turns.jsonl was rewritten") && !strings.Contains(r.log(), "turns.jsonl had") {
		t.Errorf("the recovered turn's entry does not name turns.jsonl:\n%s", r.log())
	}
}

// An init.sh that a turn a crash cut short deleted gets its content from
// the turn's start back (kept in the private folder), before the run
// reconciles the feature list with it.
func TestRecoveryRestoresInitScript(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	path := r.store.Path(r.id, harness.FileInitScript)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r.crashMidTurn(func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	})
	two := 2
	if _, err := r.run(context.Background(), "-features 2 -default idle", harness.LimitChanges{MaxIterations: &two}); err != nil {
		t.Fatal(err, r.stderr.String())
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Errorf("init.sh = %q, %v; want its content from the turn's start", after, err)
	}
	if !strings.Contains(r.log(), "init.sh was deleted") {
		t.Errorf("the recovered turn's entry does not name init.sh:\n%s", r.log())
	}
}
