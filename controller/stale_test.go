package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

// A request queued before the task's last change (here: before a direct
// edit to 60 iterations and a resume of the paused task) is dropped, not
// applied over that change (issue 11: a stale edit overrode a later one, a
// stale pause ended the next resume at once).
func TestStaleRequestsAreDropped(t *testing.T) {
	t.Parallel()
	changed := time.Now().UTC().Truncate(time.Second)
	r := newTask(t, func(st *harness.State) {
		st.Status = harness.StatusPaused
		st.StopReason = harness.ReasonPausedByUser
		st.Limits.MaxIterations = 60
		st.UpdatedAt = changed
		st.CreatedAt = changed.Add(-time.Hour)
	})
	fifty := 50
	before := changed.Add(-time.Minute)
	for _, req := range []harness.ControlRequest{
		{Kind: harness.ControlLimits, At: before, Limits: &harness.LimitChanges{MaxIterations: &fifty}},
		{Kind: harness.ControlPause, At: before},
	} {
		if err := r.store.AppendControl(r.id, req); err != nil {
			t.Fatal(err)
		}
	}
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete || st.CurrentIteration == 0 {
		t.Fatalf("status %s after %d turns, want complete: a stale pause was applied\n%s", st.Status, st.CurrentIteration, r.stderr.String())
	}
	if st.Limits.MaxIterations != 60 {
		t.Errorf("max iterations %d, want 60: a stale edit overrode a later one", st.Limits.MaxIterations)
	}
	if got := strings.Count(r.stderr.String(), "no longer applies"); got != 2 {
		t.Errorf("%d drops said, want 2:\n%s", got, r.stderr.String())
	}
	if reqs, err := r.store.PeekControl(r.id); err != nil || len(reqs) != 0 {
		t.Errorf("control.json after the run: %v, %v; want empty", reqs, err)
	}
}

// A request made during the run is applied as before.
func TestFreshRequestIsApplied(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	if err := r.store.AppendControl(r.id, harness.ControlRequest{Kind: harness.ControlStop, At: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusStopped {
		t.Fatalf("status %s, %v; want stopped", st.Status, err)
	}
}
