package controller

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// TestFinishPendingRecord: a run that finds a turn's record pending (grub
// died while writing it) finishes it, writing only what is missing: the
// entry once, the commit once, and the task stays complete.
func TestFinishPendingRecord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		inLog, committed  bool
		wantNewCommit     bool
		wantEntriesOfLast int
	}{
		{"after the state save", false, false, true, 1},
		{"after the log append", true, false, true, 1},
		{"after the commit", true, true, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
			if err != nil || st.Status != harness.StatusComplete {
				t.Fatalf("first run: %v, %v\n%s", st.Status, err, r.stderr.String())
			}
			n := st.CurrentIteration
			log := r.log()
			at := strings.LastIndex(log, "\n## Turn ")
			entry := log[at:]
			// What a crash in the last turn's record leaves.
			st.RecordPending = &harness.PendingRecord{Iteration: n, Entry: entry, Feature: "feature-2", Summary: "implemented feature-2"}
			if err := r.store.SaveState(st); err != nil {
				t.Fatal(err)
			}
			if !tc.inLog {
				if err := os.WriteFile(r.store.Path(r.id, harness.FileProgressLog), []byte(log[:at]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.committed {
				r.commits.commits = r.commits.commits[:len(r.commits.commits)-1]
			}
			before := len(r.commits.commits)

			st, err = r.run(context.Background(), "-features 2", harness.LimitChanges{})
			if err != nil || st.Status != harness.StatusComplete {
				t.Fatalf("second run: %v (pending %v), %v\n%s", st.Status, st.RecordPending, err, r.stderr.String())
			}
			if c := strings.Count(r.log(), "## Turn "+strconv.Itoa(n)+":"); c != tc.wantEntriesOfLast {
				t.Errorf("%d entries of turn %d, want %d:\n%s", c, n, tc.wantEntriesOfLast, r.log())
			}
			if got := len(r.commits.commits) - before; got != map[bool]int{true: 1, false: 0}[tc.wantNewCommit] {
				t.Errorf("%d new commits, want new: %v", got, tc.wantNewCommit)
			}
			if c := r.commits.last(); c.Iteration != n || c.Status != string(harness.StatusComplete) {
				t.Errorf("last commit %+v", c)
			}
			// The record stays in state, as the commit holds it, so that
			// the work tree is clean: a run that starts finds it written.
			saved, err := r.store.LoadState(r.id)
			if err != nil || saved.RecordPending == nil || saved.RecordPending.Iteration != n {
				t.Errorf("state on disk: pending %+v, %v", saved.RecordPending, err)
			}
		})
	}
}
