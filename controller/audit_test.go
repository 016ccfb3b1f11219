package controller

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// regressionFinding returns the regression finding of turn n in the
// ledger, or "".
func (r *run) regressionFinding(n int) string {
	r.t.Helper()
	turns, err := r.store.LoadTurns(r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, tr := range turns {
		if tr.Iteration != n {
			continue
		}
		for _, f := range tr.Findings {
			if f.Kind == harness.FindingRegression {
				return f.Text
			}
		}
	}
	return ""
}

// checkFinalTree fails unless every feature of st passes and its verify
// command's marker file is in the workspace.
func (r *run) checkFinalTree(st *harness.State) {
	r.t.Helper()
	for _, f := range st.FeatureListBaseline.Features {
		if !f.Passes {
			r.t.Errorf("%s does not pass at the end", f.ID)
		}
		if _, err := os.Stat(filepath.Join(r.store.Root, f.ID+".done")); err != nil {
			r.t.Errorf("%s passes but its check fails on the final tree: %v", f.ID, err)
		}
	}
}

// With the sweep off, the turn that completes the list is audited: the
// feature whose work turn 3 deleted (break-earlier) is set back to passes
// false by grub, the task goes on, and ends complete only once every
// check passes on the final tree.
func TestCompletionAuditCatchesASilentRegression(t *testing.T) {
	t.Parallel()
	r := newTask(t, func(st *harness.State) { st.Limits.RegressionChecks = 0 })
	st, err := r.run(context.Background(), "-features 3 -plan 3:break-earlier", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete || st.CurrentIteration != 5 {
		t.Fatalf("status %s after %d turns (%s), want complete after 5 (the audit sends turn 5 back to feature-1)\n%s", st.Status, st.CurrentIteration, st.StopReason, r.log())
	}
	r.checkFinalTree(st)
	if f := r.regressionFinding(3); f != "" {
		t.Errorf("the sweep is off, yet turn 3 has a regression finding: %s", f)
	}
	f := r.regressionFinding(4)
	for _, want := range []string{"completion audit", "feature-1", "test -f feature-1.done", "passes: false"} {
		if !strings.Contains(f, want) {
			t.Errorf("turn 4's regression finding lacks %q: %q", want, f)
		}
	}
	if c := r.commits.commits[3]; c.Iteration != 4 || c.Status == string(harness.StatusComplete) {
		t.Errorf("turn 4's commit %+v: the audited turn must not complete the task", c)
	}
	prompt, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0005.prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prompt), "regression") || !strings.Contains(string(prompt), "feature-1") {
		t.Errorf("turn 5's prompt does not tell of the regression:\n%s", prompt)
	}
	if log := r.log(); !strings.Contains(log, "the completion audit: 1 of 2 passed") {
		t.Errorf("the log does not show the audit:\n%s", log)
	}
	turns, err := r.store.LoadTurns(r.id)
	if err != nil {
		t.Fatal(err)
	}
	// Every check the audit ran is in the ledger, passed or failed, with
	// its feature and how long it ran; the command only of a failed one.
	want := map[int][]harness.LedgerCheck{
		4: {{Name: harness.CheckAudit, Feature: "feature-1", Command: "test -f feature-1.done", Result: harness.CheckFailed, ExitCode: 1},
			{Name: harness.CheckAudit, Feature: "feature-2", Result: harness.CheckPassed}},
		5: {{Name: harness.CheckAudit, Feature: "feature-2", Result: harness.CheckPassed},
			{Name: harness.CheckAudit, Feature: "feature-3", Result: harness.CheckPassed}},
	}
	for n, checks := range want {
		var audit []harness.LedgerCheck
		for _, c := range turns[n-1].Checks {
			if c.Name == harness.CheckAudit {
				if c.DurationSeconds <= 0 {
					t.Errorf("turn %d: audit check of %s has no duration", n, c.Feature)
				}
				c.DurationSeconds = 0
				audit = append(audit, c)
			}
		}
		if !slices.Equal(audit, checks) {
			t.Errorf("turn %d's audit checks in the ledger:\n%+v\nwant\n%+v", n, audit, checks)
		}
	}
}

// With the default sweep, the regression is found in the turn that caused
// it, and the feature list grub commits with that turn says so.
func TestRegressionSweepCatchesItInTheTurnThatCausedIt(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	st, err := r.run(context.Background(), "-features 3 -plan 3:break-earlier", harness.LimitChanges{})
	if err != nil {
		t.Fatal(err, r.stderr.String())
	}
	if st.Status != harness.StatusComplete || st.CurrentIteration != 5 {
		t.Fatalf("status %s after %d turns (%s), want complete after 5\n%s", st.Status, st.CurrentIteration, st.StopReason, r.log())
	}
	r.checkFinalTree(st)
	f := r.regressionFinding(3)
	for _, want := range []string{"found in turn 3", "regression sweep", "feature-1", "last passed in turn 2"} {
		if !strings.Contains(f, want) {
			t.Errorf("turn 3's regression finding lacks %q: %q", want, f)
		}
	}
	turns, err := r.store.LoadTurns(r.id)
	if err != nil {
		t.Fatal(err)
	}
	if tr := turns[2]; tr.Flipped != "feature-2" || tr.Passing != 1 {
		t.Errorf("turn 3's ledger line: flipped %q, %d passing; want feature-2 accepted and feature-1 set back (1 passing)", tr.Flipped, tr.Passing)
	}
	if !slices.ContainsFunc(turns[2].Checks, func(c harness.LedgerCheck) bool {
		return c.Name == harness.CheckRecheck && c.Feature == "feature-1" && c.Result == harness.CheckFailed
	}) {
		t.Errorf("turn 3's ledger checks lack the failed recheck of feature-1: %+v", turns[2].Checks)
	}
	// Turn 5's flip and audit checked every feature last.
	if want := map[string]int{"feature-1": 5, "feature-2": 5, "feature-3": 5}; !maps.Equal(st.LastChecked, want) {
		t.Errorf("last checked %v, want %v", st.LastChecked, want)
	}
}

func TestSweepPick(t *testing.T) {
	t.Parallel()
	l := &featurelist.List{Features: []featurelist.Feature{
		{ID: "a", Passes: true, Verify: "true"},
		{ID: "b", Passes: true, Verify: "true"},
		{ID: "c", Passes: false, Verify: "true"},
		{ID: "d", Passes: true},
		{ID: "e", Passes: true, Verify: "true"},
		{ID: "f", Passes: true, Verify: "true"},
	}}
	cases := []struct {
		name string
		last map[string]int
		skip string
		n    int
		want []string
	}{
		{"off", nil, "", 0, nil},
		{"never checked: list order", nil, "", 2, []string{"a", "b"}},
		{"least recently checked first", map[string]int{"a": 5, "b": 3, "e": 4}, "", 3, []string{"f", "b", "e"}},
		{"skips the flipped feature", map[string]int{"a": 1}, "b", 2, []string{"e", "f"}},
		{"more than there are", nil, "", 10, []string{"a", "b", "e", "f"}},
	}
	for _, c := range cases {
		var got []string
		for _, f := range sweepPick(l, c.last, c.skip, c.n) {
			got = append(got, f.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: picked %v, want %v", c.name, got, c.want)
		}
	}
}

// What counts toward --max-fail: a regression the sweep finds is the
// failure of the turn that caused it (its work broke a feature that
// passed), so with --max-fail 1 the task fails there; a regression the
// completion audit finds is grub's check of the task, not of the turn:
// it is recorded and sent to the next prompt, never counted, so the same
// limit does not end the task and the next turn restores the feature.
func TestRegressionFailureBudget(t *testing.T) {
	t.Parallel()
	t.Run("sweep: the turn's failure", func(t *testing.T) {
		t.Parallel()
		r := newTask(t, func(st *harness.State) { st.Limits.MaxConsecutiveFailures = 1 })
		st, err := r.run(context.Background(), "-features 3 -plan 3:break-earlier", harness.LimitChanges{})
		if err != nil {
			t.Fatal(err, r.stderr.String())
		}
		if st.Status != harness.StatusFailed || st.CurrentIteration != 3 || st.ConsecutiveFailures != 1 {
			t.Fatalf("status %s after %d turns, %d failures (%s); want failed after turn 3, whose sweep found the regression", st.Status, st.CurrentIteration, st.ConsecutiveFailures, st.StopReason)
		}
	})
	t.Run("audit: not a failure", func(t *testing.T) {
		t.Parallel()
		r := newTask(t, func(st *harness.State) { st.Limits.RegressionChecks, st.Limits.MaxConsecutiveFailures = 0, 1 })
		st, err := r.run(context.Background(), "-features 3 -plan 3:break-earlier", harness.LimitChanges{})
		if err != nil {
			t.Fatal(err, r.stderr.String())
		}
		if st.Status != harness.StatusComplete || st.CurrentIteration != 5 {
			t.Fatalf("status %s after %d turns (%s); want complete after 5: the audit of turn 4 is not a failed turn\n%s", st.Status, st.CurrentIteration, st.StopReason, r.log())
		}
		if f := r.regressionFinding(4); !strings.Contains(f, "completion audit") {
			t.Errorf("turn 4's ledger line lacks the audit's regression finding: %q", f)
		}
		if !strings.Contains(r.log(), "Completion audit: regression found in turn 4") {
			t.Errorf("the log does not show the audit's regression:\n%s", r.log())
		}
		prompt, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0005.prompt.md"))
		if err != nil {
			t.Fatal(err)
		}
		if p := string(prompt); !strings.Contains(p, "The completion audit set a feature back") || strings.Contains(p, "The previous turn failed") {
			t.Errorf("turn 5's prompt does not give the audit's finding as a finding:\n%s", p)
		}
	})
}
