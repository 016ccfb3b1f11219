package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConversionNeedsGit: a repository that asks git to convert
// files on commit is refused before any turn, with a usage error (exit 2)
// naming why and what to do, only where the git program is missing; one
// that asks for nothing needs no git at all.
func TestCheckConversionNeedsGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("the git binary sets up the repository")
	}
	dir := t.TempDir()
	if out, err := exec.Command(git, "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	repo, err := openRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := checkConversion(repo); err != nil {
		t.Fatalf("a repository without attributes: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.bin filter=lfs diff=lfs merge=lfs -text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkConversion(repo)
	var usage *UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), ".gitattributes: *.bin filter=lfs") ||
		!strings.Contains(err.Error(), "git is not on PATH") || !strings.Contains(err.Error(), "--no-commit") {
		t.Fatalf("checkConversion without git = %v; want a usage error naming the attribute, git and --no-commit", err)
	}
	t.Setenv("PATH", filepath.Dir(git))
	if err := checkConversion(repo); err != nil {
		t.Errorf("with git on PATH: %v", err)
	}
}
