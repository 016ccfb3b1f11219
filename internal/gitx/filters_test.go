package gitx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
)

func TestFilters(t *testing.T) {
	dir := t.TempDir()
	if _, err := git.PlainInit(dir, false); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Filters(); err != nil || len(got) != 0 {
		t.Fatalf("Filters() = %v, %v on a repository without attributes", got, err)
	}
	attrs := "# comment\n*.txt text eol=lf\n*.psd filter=lfs diff=lfs merge=lfs -text\n"
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(attrs), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), []byte("*.dat filter=upper\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := r.Filters()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"*.psd filter=lfs diff=lfs merge=lfs -text", "*.dat filter=upper"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Filters() = %q, want %q", got, want)
	}
}
