package gitx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiddenHistory: every ref stays where grub left it, yet the user's
// git shows another history: a replace ref of a commit of the history
// (loose, or packed where a guard of refs/replace/ would not see it), of
// a file of the last commit, a planted shallow line. Each is named,
// UnhideHistory removes it (keeping the replacement under a ref) and the
// user's git log shows the commits again. A real shallow boundary (its
// parents missing), a replace ref of a commit off the history and one
// the user made for another object are not the task's.
func TestHiddenHistory(t *testing.T) {
	cases := []struct {
		name, want string
		do         func(dir string, run func(string, ...string) string, mark string)
	}{
		{"nothing", "", func(string, func(string, ...string) string, string) {}},
		{"replace the last commit", "makes git show another commit in place of", func(dir string, run func(string, ...string) string, mark string) {
			forged := strings.TrimSpace(run(dir, "commit-tree", "-m", "forged root", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
			run(dir, "replace", mark, forged)
		}},
		{"replace an older commit, packed", "a commit of the task's history", func(dir string, run func(string, ...string) string, mark string) {
			first := strings.TrimSpace(run(dir, "rev-parse", mark+"~1"))
			forged := strings.TrimSpace(run(dir, "commit-tree", "-m", "forged", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
			run(dir, "replace", first, forged)
			run(dir, "pack-refs", "--all")
			if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "replace", first)); err == nil {
				t.Fatal("the replace ref is still loose")
			}
		}},
		{"graft", "a commit of the task's history", func(dir string, run func(string, ...string) string, mark string) {
			run(dir, "replace", "--graft", mark) // no parents: the history ends there
		}},
		{"replace a file", "a file or folder of grub's last turn commit", func(dir string, run func(string, ...string) string, mark string) {
			blob := strings.TrimSpace(run(dir, "rev-parse", mark+":a.txt"))
			other := strings.TrimSpace(run(dir, "hash-object", "-w", "--stdin"))
			run(dir, "replace", "-f", blob, other)
		}},
		{"shallow", ".git/shallow cuts the history at", func(dir string, run func(string, ...string) string, mark string) {
			writeFileT(t, filepath.Join(dir, ".git", "shallow"), mark+"\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, r, run, mark := appendRepo(t)
			before := run(dir, "log", "--format=%s")
			c.do(dir, run, mark)
			h, err := r.HiddenHistory(mark)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if h.Problem() != "" {
					t.Fatalf("found %q", h.Problem())
				}
				return
			}
			if !strings.Contains(h.Problem(), c.want) {
				t.Fatalf("problem %q, want %q", h.Problem(), c.want)
			}
			if run(dir, "log", "--format=%s") == before && !strings.Contains(c.name, "file") {
				t.Fatal("the cheat did not change what git log shows: the test proves nothing")
			}
			kept, err := r.UnhideHistory(mark, "refs/grub/t/discarded/3")
			if err != nil {
				t.Fatal(err)
			}
			if h, _ := r.HiddenHistory(mark); h.Problem() != "" {
				t.Fatalf("still hidden after UnhideHistory: %s", h.Problem())
			}
			if got := run(dir, "log", "--format=%s"); got != before {
				t.Fatalf("git log after UnhideHistory:\n%s\nwant:\n%s", got, before)
			}
			if len(h.Replace) > 0 && len(kept) != len(h.Replace) {
				t.Fatalf("kept %v for %v", kept, h.Replace)
			}
			for _, k := range kept {
				run(dir, "rev-parse", "--verify", k)
			}
		})
	}
}

// TestHiddenHistoryNotTheTasks: what hides other objects, or a real
// shallow boundary, is left alone.
func TestHiddenHistoryNotTheTasks(t *testing.T) {
	dir, r, run, mark := appendRepo(t)
	// A commit off the history, replaced.
	run(dir, "checkout", "-q", "-b", "side", mark+"~1")
	writeFileT(t, filepath.Join(dir, "side.txt"), "side\n")
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "side")
	side := strings.TrimSpace(run(dir, "rev-parse", "HEAD"))
	run(dir, "checkout", "-q", "main")
	forged := strings.TrimSpace(run(dir, "commit-tree", "-m", "forged", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
	run(dir, "replace", side, forged)
	// A blob that is in no file of the last commit.
	loose := strings.TrimSpace(run(dir, "hash-object", "-w", "--stdin"))
	other := strings.TrimSpace(run(dir, "hash-object", "-w", filepath.Join(dir, "a.txt")))
	run(dir, "replace", "-f", loose, other)
	// A shallow line of a root commit.
	writeFileT(t, filepath.Join(dir, ".git", "shallow"), forged+"\n")
	h, err := r.HiddenHistory(mark)
	if err != nil {
		t.Fatal(err)
	}
	if h.Problem() != "" {
		t.Fatalf("found %q", h.Problem())
	}
	// A real shallow clone: its boundary's parents are missing.
	clone := t.TempDir()
	run(clone, "clone", "-q", "--depth", "1", "file://"+dir, ".")
	if data, err := os.ReadFile(filepath.Join(clone, ".git", "shallow")); err != nil || len(data) == 0 {
		t.Fatalf("the clone is not shallow: %v", err)
	}
	head := strings.TrimSpace(run(clone, "rev-parse", "HEAD"))
	if h, err := mustOpen(t, clone).HiddenHistory(head); err != nil || h.Problem() != "" {
		t.Fatalf("a shallow clone: %q, %v", h.Problem(), err)
	}
}

func writeFileT(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
