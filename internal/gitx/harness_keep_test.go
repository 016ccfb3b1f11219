package gitx

import (
	"context"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/grub-dev/grub/harness"
)

// A name in Keep (.grub/config.toml) keeps its index entry as it is: a
// committed file stays in every turn commit with its committed content,
// whatever is on disk (an uncommitted edit, a deletion); an untracked one
// is never added.
func TestHarnessKeepLeavesTheIndexEntry(t *testing.T) {
	for name, tc := range map[string]struct {
		committed bool
		disk      string // "\x00": deleted
		want      string // "": not in the commit
	}{
		"committed, edited":   {true, "on-turn = \"x\"\n", "max-iter = 3\n"},
		"committed, deleted":  {true, "\x00", "max-iter = 3\n"},
		"committed, as it is": {true, "max-iter = 3\n", "max-iter = 3\n"},
		"untracked":           {false, "on-turn = \"x\"\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			g, err := git.PlainInit(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			cfg := harness.GrubDirName + "/" + harness.FileWorkspaceConfig
			write(t, dir, map[string]string{"README": "r\n", cfg: "max-iter = 3\n"})
			wt, err := g.Worktree()
			if err != nil {
				t.Fatal(err)
			}
			add := []string{"README"}
			if tc.committed {
				add = append(add, cfg)
			}
			for _, p := range add {
				if _, err := wt.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := wt.Commit("the project", &git.CommitOptions{AllowEmptyCommits: true, Author: &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Unix(1e9, 0)}}); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{cfg: tc.disk})
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			r = r.WithHarness(HarnessFiles{Dir: harness.GrubDirName, Tracked: harness.TrackedFiles(), Keep: []string{harness.FileWorkspaceConfig}})
			c, err := r.CommitTurn(context.Background(), Turn{TaskID: "0a1b2c3d", Iteration: 1, Summary: "s", Status: "running"})
			if err != nil {
				t.Fatal(err)
			}
			co, err := g.CommitObject(plumbing.NewHash(c.Hash))
			if err != nil {
				t.Fatal(err)
			}
			f, err := co.File(cfg)
			switch {
			case tc.want == "" && err == nil:
				t.Errorf("the commit added the untracked %s", cfg)
			case tc.want != "" && err != nil:
				t.Fatalf("the commit lost %s: %v", cfg, err)
			case tc.want != "":
				if got, _ := f.Contents(); got != tc.want {
					t.Errorf("%s in the commit: %q, want %q", cfg, got, tc.want)
				}
			}
		})
	}
}
