package gitx

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/atomicfile"
)

// A temp file that a crash during an atomic write leaves in a task folder
// (or in .grub itself) is ignored by git: the turn commit holds the task's
// files and never the temp file.
func TestCrashTempFilesNeverCommitted(t *testing.T) {
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
	var temps []string
	for _, at := range []struct{ dir, name string }{
		{s.Dir(st.ID), harness.FileFeatureList},
		{s.Dir(st.ID), harness.FileState},
		{s.GrubDir(), ".gitignore"},
	} {
		f, err := os.CreateTemp(at.dir, atomicfile.TempPattern(at.name))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"half-writ`)
		f.Close()
		temps = append(temps, s.Rel(f.Name()))
	}
	if !strings.HasPrefix(path.Base(temps[0]), ".feature-list.json.tmp-") {
		t.Fatalf("temp file %s is not named like the atomic writer's", temps[0])
	}

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitTurn(context.Background(), Turn{TaskID: st.ID, Iteration: 1, Summary: "s", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	files := commitFiles(t, dir, c.Hash)
	for _, tmp := range temps {
		if files[tmp] {
			t.Errorf("the turn commit holds the crash leftover %s", tmp)
		}
	}
	for _, name := range []string{harness.FileState, harness.FileProgressLog, harness.FileInitScript} {
		if rel := s.Rel(s.Path(st.ID, name)); !files[rel] {
			t.Errorf("the turn commit lacks %s; it holds %v", rel, files)
		}
	}
	dirty, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirty {
		if strings.Contains(d, ".tmp-") {
			t.Errorf("Dirty reports the ignored temp file %s", d)
		}
	}
}

// commitFiles is the set of file paths in the tree of commit hash.
func commitFiles(t *testing.T, dir, hash string) map[string]bool {
	t.Helper()
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	if err := tree.Files().ForEach(func(f *object.File) error { out[filepath.ToSlash(f.Name)] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
