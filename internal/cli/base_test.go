package cli

import (
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// TestSayReview: the review and undo lines fit where the task commits: the
// user's branch, a branch grub made (from a branch or a detached HEAD), a
// detached HEAD, a branch the task moved to since; none without a base or
// with --no-commit.
func TestSayReview(t *testing.T) {
	base := strings.Repeat("ab", 20)
	for _, c := range []struct {
		name    string
		st      harness.State
		want    []string
		notWant string
	}{
		{"user's branch", harness.State{Base: &harness.GitBase{Branch: "refs/heads/main", Commit: base}},
			[]string{"git log --oneline abababababab..main", "git diff abababababab..main", "undo them: git reset --keep abababababab, with main checked out"}, "switch"},
		{"made from main", harness.State{Base: &harness.GitBase{Branch: "refs/heads/grub/0a1b2c3d", Commit: base, Made: true, From: "refs/heads/main"}},
			[]string{"git diff abababababab..grub/0a1b2c3d", "keep them: git switch main && git merge grub/0a1b2c3d; undo them: git switch main && git branch -D grub/0a1b2c3d"}, "reset --keep"},
		{"made from a detached HEAD", harness.State{Base: &harness.GitBase{Branch: "refs/heads/grub/0a1b2c3d", Commit: base, Made: true}},
			[]string{"undo them: git switch --detach abababababab && git branch -D grub/0a1b2c3d"}, "reset --keep"},
		{"detached", harness.State{Base: &harness.GitBase{Commit: base}},
			[]string{"git log --oneline abababababab..HEAD", "undo them: git switch --detach abababababab"}, "reset --keep"},
		{"moved to another branch", harness.State{Base: &harness.GitBase{Branch: "refs/heads/main", Commit: base}, History: &harness.HistoryMark{Branch: "refs/heads/work", Commit: base}},
			[]string{"git diff abababababab..work", "with work checked out"}, "..main"},
		{"a branch name to quote", harness.State{Base: &harness.GitBase{Branch: "refs/heads/a$b", Commit: base}},
			[]string{"git diff abababababab..'a$b'"}, ""},
		{"carried", harness.State{Base: &harness.GitBase{Branch: "refs/heads/main", Commit: base, Carried: true}},
			[]string{"an undo takes them away too", "git reset abababababab (without --keep)"}, ""},
	} {
		var b strings.Builder
		c.st.ID = "0a1b2c3d"
		sayReview(&b, &c.st)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, &b)
			}
		}
		if c.notWant != "" && strings.Contains(b.String(), c.notWant) {
			t.Errorf("%s: %q in\n%s", c.name, c.notWant, &b)
		}
	}
	for _, st := range []harness.State{{}, {NoCommit: true, Base: &harness.GitBase{Commit: base}}} {
		var b strings.Builder
		sayReview(&b, &st)
		if b.Len() != 0 {
			t.Errorf("%+v: printed %q", st, &b)
		}
	}
}
