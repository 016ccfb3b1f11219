package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// fakeHistory is a repository's refs in memory: branches, HEAD and each
// commit's parent, so that a test can rewrite history as an agent would.
type fakeHistory struct {
	mu       sync.Mutex
	head     string            // the branch HEAD is on; "" detached at detached
	detached string            // HEAD's commit when detached
	refs     map[string]string // branch -> commit
	parent   map[string]string
	n        int
	kept     []string // the keep refs Restore was given
	marker   string   // a file whose presence reads as a reset (for what init.sh does)
}

func newFakeHistory() *fakeHistory {
	return &fakeHistory{head: "refs/heads/main", refs: map[string]string{"refs/heads/main": hc(0)}, parent: map[string]string{}}
}

func (h *fakeHistory) commitLocked() string {
	h.n++
	c := hc(h.n)
	h.parent[c] = h.headLocked()
	if h.head == "" {
		h.detached = c
	} else {
		h.refs[h.head] = c
	}
	return c
}

func (h *fakeHistory) headLocked() string {
	if h.head == "" {
		return h.detached
	}
	return h.refs[h.head]
}

func (h *fakeHistory) Head() (harness.HistoryMark, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return harness.HistoryMark{Branch: h.head, Commit: h.headLocked()}, nil
}

func (h *fakeHistory) Check(m harness.HistoryMark) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := os.Stat(h.marker); h.marker != "" && err == nil {
		return "reset (the marker is there)", nil
	}
	switch {
	case m.Branch != "" && h.head != m.Branch:
		return "HEAD is on " + h.head + " instead of " + m.Branch, nil
	case h.headLocked() == "":
		return "the branch was deleted", nil
	}
	for c := h.headLocked(); c != ""; c = h.parent[c] {
		if c == m.Commit {
			return "", nil
		}
	}
	return "no longer descends from " + m.Commit, nil
}

func (h *fakeHistory) Restore(_ context.Context, m harness.HistoryMark, keep string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kept = append(h.kept, keep)
	if h.marker != "" {
		_ = os.Remove(h.marker)
	}
	h.head, h.refs[m.Branch] = m.Branch, m.Commit
	return []string{keep}, nil
}

// historyCommitter commits on the fake history.
type historyCommitter struct {
	*recorder
	h *fakeHistory
}

func (c historyCommitter) Commit(ctx context.Context, cm Commit) (CommitReport, error) {
	rep, err := c.recorder.Commit(ctx, cm)
	c.h.mu.Lock()
	rep.Hash = c.h.commitLocked()
	c.h.mu.Unlock()
	return rep, err
}

func (r *run) runHistory(a agent.Agent, h *fakeHistory, accept bool, lim harness.LimitChanges) (*harness.State, error) {
	return Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock, Limits: lim,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: historyCommitter{&r.commits, h}, History: h, AcceptHistory: accept})
}

// TestHistoryRewrittenByTheAgent: a turn that takes grub's commits off the
// branch (a reset), or moves HEAD to another branch, fails with what
// happened; the history is put back at grub's last turn commit, the
// rewritten commits kept under refs/grub/<id>/discarded/<turn>, the next
// prompt says so, and the task completes with one commit per turn on the
// branch.
func TestHistoryRewrittenByTheAgent(t *testing.T) {
	t.Parallel()
	for name, rewrite := range map[string]func(h *fakeHistory){
		"reset": func(h *fakeHistory) { h.refs["refs/heads/main"] = hc(0) },
		"amend": func(h *fakeHistory) { h.refs["refs/heads/main"] = hc(101); h.parent[hc(101)] = h.parent[hc(2)] },
		"other branch": func(h *fakeHistory) {
			h.head = "refs/heads/other"
			h.refs["refs/heads/other"] = h.refs["refs/heads/main"]
		},
		"deleted": func(h *fakeHistory) { delete(h.refs, "refs/heads/main") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			h := newFakeHistory()
			a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{3: func(agent.Turn) error {
				h.mu.Lock()
				defer h.mu.Unlock()
				rewrite(h)
				return nil
			}}}
			st, err := r.runHistory(a, h, false, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err, r.stderr.String())
			}
			if st.Status != harness.StatusComplete || st.CurrentIteration != 4 {
				t.Fatalf("status %s after %d turns, want complete after 4\n%s", st.Status, st.CurrentIteration, r.stderr.String())
			}
			want := fmt.Sprintf("refs/grub/%s/discarded/3", r.id)
			if len(h.kept) != 1 || h.kept[0] != want {
				t.Fatalf("restores kept %v, want [%s]", h.kept, want)
			}
			msg := "the turn rewrote git's history"
			if !strings.Contains(r.log(), "Failure: "+msg) || !strings.Contains(r.log(), "Do not rewrite history") {
				t.Errorf("progress log lacks the failure:\n%s", r.log())
			}
			turns, err := r.store.LoadTurns(r.id)
			if err != nil || len(turns) != 4 || len(turns[2].Findings) == 0 || turns[2].Findings[0].Kind != harness.FindingTampering {
				t.Errorf("ledger of turn 3: %+v, %v", turns, err)
			}
			if h.head != "refs/heads/main" || h.refs["refs/heads/main"] != hc(4) || h.parent[hc(4)] != hc(3) || h.parent[hc(3)] != hc(2) {
				t.Errorf("history after the run: HEAD %s, main %s, parents %v", h.head, h.refs["refs/heads/main"], h.parent)
			}
			if st.History == nil || st.History.Commit != hc(4) || st.History.Branch != "refs/heads/main" {
				t.Errorf("state's mark %+v, want main at c4", st.History)
			}
		})
	}
}

// TestHistoryChangedBetweenRuns: a history changed while no run was on is
// the user's: the run refuses to start, naming it and --accept-history;
// with AcceptHistory it takes HEAD as the new base and goes on.
func TestHistoryChangedBetweenRuns(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.MaxIterations = 2 })
	h := newFakeHistory()
	more := 10
	st, err := r.runHistory(r.agent("-features 2"), h, false, harness.LimitChanges{})
	if err != nil || st.CurrentIteration != 2 {
		t.Fatalf("first run: %v after %d turns\n%s", err, st.CurrentIteration, r.stderr.String())
	}
	h.head, h.refs["refs/heads/mine"] = "refs/heads/mine", hc(100)
	_, err = r.runHistory(r.agent("-features 2"), h, false, harness.LimitChanges{MaxIterations: &more})
	var rw *HistoryRewrittenError
	if !errors.As(err, &rw) || !strings.Contains(err.Error(), "--accept-history") || !strings.Contains(err.Error(), "HEAD is on refs/heads/mine") {
		t.Fatalf("second run: %v, want a HistoryRewrittenError", err)
	}
	if n := len(r.commits.commits); n != 2 {
		t.Fatalf("%d commits after the refusal, want 2", n)
	}
	st, err = r.runHistory(r.agent("-features 2"), h, true, harness.LimitChanges{MaxIterations: &more})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("accepted run: %v, %s\n%s", err, st.Status, r.stderr.String())
	}
	if h.parent[h.refs["refs/heads/mine"]] != hc(100) || st.History.Branch != "refs/heads/mine" {
		t.Errorf("grub did not go on from the accepted base: mine %s, parents %v, mark %+v", h.refs["refs/heads/mine"], h.parent, st.History)
	}
	if !strings.Contains(r.log(), "the user accepted git's history as it is now") {
		t.Errorf("no log entry of the acceptance:\n%s", r.log())
	}
}

// hc is the fake history's n-th commit id.
func hc(n int) string { return fmt.Sprintf("%040x", n) }

// TestHistoryRewrittenByInitScript: init.sh, run by grub to verify a
// flip, rewrites the history (here: leaves the marker the fake history
// reads as a reset). The second check catches it after the verification:
// the history is put back, the flip the verification accepted is undone,
// and a later turn flips the feature again.
func TestHistoryRewrittenByInitScript(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	h := newFakeHistory()
	h.marker = filepath.Join(r.store.Root, "REWRITE")
	a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{2: func(t agent.Turn) error {
		f, err := os.OpenFile(filepath.Join(t.HarnessDir, "init.sh"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "test -e %s/turn3 || { touch %s; touch %s/turn3; }\n", t.HarnessDir, h.marker, t.HarnessDir)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}}}
	st, err := r.runHistory(a, h, false, harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete || st.CurrentIteration != 4 {
		t.Fatalf("status %s after %d turns, want complete after 4\n%s", st.Status, st.CurrentIteration, r.stderr.String())
	}
	turns, err := r.store.LoadTurns(r.id)
	if err != nil || len(turns) != 4 {
		t.Fatalf("ledger: %v, %v", turns, err)
	}
	if turns[1].Flipped != "" || turns[1].Passing != 0 || !strings.Contains(turns[1].Findings[0].Text, "init.sh or a verify command, run by grub to verify the turn, rewrote git's history") {
		t.Errorf("turn 2's ledger line: %+v", turns[1])
	}
	if len(h.kept) != 1 || h.kept[0] != fmt.Sprintf("refs/grub/%s/discarded/2", r.id) {
		t.Errorf("keep refs %v", h.kept)
	}
}
