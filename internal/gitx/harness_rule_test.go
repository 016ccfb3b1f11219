package gitx

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"

	"github.com/grub-dev/grub/harness"
)

// The repro: the agent writes `!*` to .grub/.gitignore (and, in a
// second case, an empty one) and leaves runtime files and a stray file in
// the task folder, and a link in place of a tracked file's name. The turn
// commit holds, under .grub, only .grub/.gitignore and the task's tracked
// regular files, whatever the ignore rules say.
func TestHarnessRuleOverridesGitignore(t *testing.T) {
	for name, hostile := range map[string]string{"negate all": "!*\n", "empty": ""} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := git.PlainInit(dir, false); err != nil {
				t.Fatal(err)
			}
			s, err := harness.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			st := &harness.State{Goal: "g", Status: harness.StatusRunning, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: "codex"}}
			if err := s.Create(st); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.GrubDir(), ".gitignore"), []byte(hostile), 0o644); err != nil {
				t.Fatal(err)
			}
			td := s.Dir(st.ID)
			write(t, td, map[string]string{
				harness.FileLock:    `{"pid":1}`,
				harness.FileControl: `{}`,
				"turns/0001.jsonl":  "{}",
				"spill/shell-1.txt": "out",
				"stray.bin":         strings.Repeat("x", 1<<20),
			})
			write(t, s.GrubDir(), map[string]string{"other/notes.md": "n", "top.txt": "t"})
			if err := os.Symlink("/etc/passwd", s.Path(st.ID, harness.FileFeatureList)); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{"src/main.go": "package main\n"})

			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			r = r.WithHarness(HarnessFiles{Dir: harness.GrubDirName, Tracked: harness.TrackedFiles()})
			c, err := r.CommitTurn(context.Background(), Turn{TaskID: st.ID, Iteration: 1, Summary: "s", Status: "running"})
			if err != nil {
				t.Fatal(err)
			}
			var under []string
			files := commitFiles(t, dir, c.Hash)
			for f := range files {
				if strings.HasPrefix(f, ".grub/") {
					under = append(under, f)
				}
			}
			sort.Strings(under)
			p := ".grub/" + st.ID + "/"
			want := []string{".grub/.gitattributes", ".grub/.gitignore", p + harness.FileChecklist, p + harness.FileInitScript, p + harness.FileProgressLog, p + harness.FileState}
			if strings.Join(under, " ") != strings.Join(want, " ") {
				t.Errorf("the commit holds under .grub:\n%v\nwant:\n%v", under, want)
			}
			if !files["src/main.go"] {
				t.Errorf("the commit lacks the workspace's own file")
			}
		})
	}
}

// A file the rule does not take in that an earlier commit holds (one made
// before the rule, through a hostile .gitignore) leaves the index with the
// next turn commit.
func TestHarnessRuleDropsTrackedStrays(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{".grub/0a1b2c3d/lock": "{}", ".grub/0a1b2c3d/state.json": "{}", "a.txt": "a"})
	r = r.WithHarness(HarnessFiles{Dir: ".grub", Tracked: []string{"state.json"}})
	mustCommit(t, r, Turn{TaskID: "0a1b2c3d", Iteration: 1, Summary: "s", Status: "running"})
	files := headFiles(t, dir)
	if _, ok := files[".grub/0a1b2c3d/lock"]; ok {
		t.Errorf("the lock is still committed: %v", keys(files))
	}
	if _, ok := files[".grub/0a1b2c3d/state.json"]; !ok {
		t.Errorf("state.json left the commit: %v", keys(files))
	}
}

// The planted task: a turn writes .grub/deadbeef/state.json. With
// the rule's task filter (the tasks grub made), the commit takes nothing
// from it, nor from a task folder set aside under another name, while a
// task another grub made (committed before, in a clone) keeps its
// committed files unchanged, and the task's own files are taken.
func TestHarnessRuleTakesOnlyGrubsTasks(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{".grub/0a1b2c3d/state.json": "{}", ".grub/01d01d00/state.json": "clone", "a.txt": "a"})
	write(t, dir, map[string]string{
		".grub/0a1b2c3d/state.json":                          `{"turn":1}`,
		".grub/01d01d00/state.json":                          "changed in the work tree",
		".grub/deadbeef/state.json":                          `{"status":"paused","updatedAt":"2099-01-01T00:00:00Z"}`,
		".grub/deadbeef/init.sh":                             "touch /tmp/pwned",
		".grub/cafebabe.planted-20261201T100000Z/state.json": "{}",
	})
	r = r.WithHarness(HarnessFiles{Dir: ".grub", Tracked: []string{"state.json", "init.sh"},
		Tasks: func(name string) bool { return name == "0a1b2c3d" }})
	mustCommit(t, r, Turn{TaskID: "0a1b2c3d", Iteration: 1, Summary: "s", Status: "running"})
	files := headFiles(t, dir)
	for f := range files {
		if strings.Contains(f, "deadbeef") || strings.Contains(f, "cafebabe") {
			t.Errorf("the commit holds %s, from a task folder grub did not make", f)
		}
	}
	if files[".grub/0a1b2c3d/state.json"] != `{"turn":1}` {
		t.Errorf("the task's own state.json is %q in the commit", files[".grub/0a1b2c3d/state.json"])
	}
	if files[".grub/01d01d00/state.json"] != "clone" {
		t.Errorf("the other task's committed state.json is %q; want it kept as committed", files[".grub/01d01d00/state.json"])
	}
}
