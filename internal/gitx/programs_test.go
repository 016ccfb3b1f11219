package gitx

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgramsInRepo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git program sets up the repository")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if got, err := ProgramsInRepo(dir); err != nil || len(got) != 0 {
		t.Fatalf("a fresh repository: %q, %v; want nothing (its hooks are samples)", got, err)
	}
	git("config", "core.fsmonitor", "touch PLANTED")
	git("config", "alias.st", "!sh -c 'touch PLANTED'")
	git("config", "user.name", "Someone")
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "notes.txt"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ProgramsInRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"hook .git/hooks/pre-commit", `.git/config: core.fsmonitor = "touch PLANTED"`, ".git/config: alias.st = "} {
		if !strings.Contains(joined, want) {
			t.Errorf("ProgramsInRepo lacks %q:\n%s", want, joined)
		}
	}
	for _, not := range []string{"user.name", "notes.txt", ".sample"} {
		if strings.Contains(joined, not) {
			t.Errorf("ProgramsInRepo lists %q:\n%s", not, joined)
		}
	}
	if got, err := ProgramsInRepo(t.TempDir()); err != nil || got != nil {
		t.Errorf("outside a repository: %q, %v", got, err)
	}
}
