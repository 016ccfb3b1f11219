package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// TestRecordRewriteIsRestored plays, in turn 3, each cheat on grub's
// record after a turn 2 the referee caught (a flip whose verify failed):
// the record is put back as grub wrote it, turn 3 fails naming the file
// (in the log, the ledger and the next prompt), and the task goes on to
// complete with turn 2's failure still on record.
func TestRecordRewriteIsRestored(t *testing.T) {
	t.Parallel()
	cases := []struct{ behaviour, file string }{
		{"rewrite-ledger", "turns.jsonl was rewritten"},
		{"forge-ledger", "turns.jsonl had"},
		{"rewrite-log", "progress-log.md was rewritten"},
		{"truncate-log", "progress-log.md was truncated (10 of the"},
		{"edit-checklist", "feature-checklist.md was rewritten"},
		{"delete-init", "init.sh was deleted"},
		{"empty-init", "init.sh was emptied"},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			st, err := r.run(context.Background(), "-features 2 -plan 2:verify-fail,3:"+c.behaviour, harness.LimitChanges{})
			if err != nil {
				t.Fatal(err, r.stderr.String())
			}
			if st.Status != harness.StatusComplete || st.CurrentIteration != 5 {
				t.Fatalf("status %s after %d turns, want complete after 5 (init, caught, cheat, two honest)\n%s", st.Status, st.CurrentIteration, r.log())
			}
			turns, err := r.store.LoadTurns(r.id)
			if err != nil {
				t.Fatal(err)
			}
			if len(turns) != 5 {
				t.Fatalf("%d ledger lines, want 5: %+v", len(turns), turns)
			}
			if t2 := turns[1]; len(t2.Findings) == 0 || t2.Findings[0].Kind != harness.FindingVerification {
				t.Errorf("turn 2's line lost what the referee caught: %+v", t2)
			}
			t3 := turns[2]
			if len(t3.Findings) == 0 || t3.Findings[0].Kind != harness.FindingTampering || !strings.Contains(t3.Findings[0].Text, c.file) {
				t.Errorf("turn 3's line does not name %q as tampering: %+v", c.file, t3.Findings)
			}
			log := r.log()
			if !strings.Contains(log, "## Turn 2") || !strings.Contains(log, "- Failure: feature `feature-1` was claimed passing but") || !strings.Contains(log, c.file) {
				t.Errorf("the log lost turn 2's failure or does not name %q:\n%s", c.file, log)
			}
			prompt, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0004.prompt.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(prompt), c.file) {
				t.Errorf("the next prompt does not name %q", c.file)
			}
		})
	}
}
