package gitx

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestProgramsInNestedRepo: grub doctor names a repository nested in the
// work tree and the programs its config names (issue 18: doctor said
// nothing of a nested core.fsmonitor).
func TestProgramsInNestedRepo(t *testing.T) {
	dir, _, run := guardRepo(t)
	run(dir, "init", "-q", "lib")
	rawGit(t, filepath.Join(dir, "lib"), "config", "core.fsmonitor", "touch PLANTED")
	writeMode(t, filepath.Join(dir, ".git/info/run.sh"), "#!/bin/sh\n", 0o755)
	got, err := ProgramsInRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nested repository lib/.git (git runs its hooks and config there, and from the outer repository for a submodule)", `lib/.git/config: core.fsmonitor = "touch PLANTED"`}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("ProgramsInRepo = %q, lacks %q", got, w)
		}
	}
	for _, g := range got {
		if strings.Contains(g, "info/run.sh") {
			t.Errorf("ProgramsInRepo names a file of info/ as a hook: %q", g)
		}
	}
}
