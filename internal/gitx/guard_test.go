package gitx

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// guardRepo makes a repository with the git binary (so that hooks/ holds
// git's samples and info/exclude exists, as in a real clone) and opens it.
func guardRepo(t *testing.T) (string, *Repo, func(dir string, args ...string) string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("modes and links")
	}
	run := gitBin(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	return dir, mustOpen(t, dir), run
}

// rawGit runs the git binary with nothing overridden on its command line,
// as the user would, and returns its combined output.
func rawGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func record(t *testing.T, r *Repo) *GitDirSnapshot {
	t.Helper()
	s, err := r.GuardGitDir()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustCheck returns the changes, failing the test on an error.
func mustCheck(t *testing.T, s *GitDirSnapshot) []string {
	t.Helper()
	changes, err := s.Check()
	if err != nil {
		t.Fatal(err)
	}
	return changes
}

func writeMode(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

const plantedHook = "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/PLANTED\"\n"

// guardCase plants one change and names what the guard must report.
type guardCase struct {
	name  string
	plant func(t *testing.T, dir string, run func(string, ...string) string)
	want  []string // substrings, one per expected change
}

var guardCases = []guardCase{
	{"hook added", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/hooks/pre-commit"), plantedHook, 0o755)
	}, []string{".git/hooks/pre-commit was added (executable)"}},
	{"sample hook edited", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/hooks/pre-commit.sample"), plantedHook, 0o755)
	}, []string{".git/hooks/pre-commit.sample was changed"}},
	{"hook mode changed", func(t *testing.T, dir string, _ func(string, ...string) string) {
		p := filepath.Join(dir, ".git/hooks/pre-push.sample")
		if err := os.Chmod(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}, []string{".git/hooks/pre-push.sample changed mode from -rwxr-xr-x to -rwx------"}},
	{"hooks folder replaced by a link", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "myhooks/pre-commit"), plantedHook, 0o755)
		if err := os.RemoveAll(filepath.Join(dir, ".git/hooks")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../myhooks", filepath.Join(dir, ".git/hooks")); err != nil {
			t.Fatal(err)
		}
	}, []string{`.git/hooks was replaced by a link to "../myhooks"`}},
	{"core.fsmonitor", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "config", "core.fsmonitor", "touch PLANTED; false")
	}, []string{`.git/config: core.fsmonitor was set to "touch PLANTED; false"`}},
	{"core.hooksPath", func(t *testing.T, dir string, run func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "myhooks/pre-commit"), plantedHook, 0o755)
		run(dir, "config", "core.hooksPath", "myhooks")
	}, []string{`.git/config: core.hookspath was set to "myhooks"`}},
	{"include.path to a file the agent controls", func(t *testing.T, dir string, run func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "evil.cfg"), "[core]\n\tfsmonitor = touch PLANTED\n", 0o644)
		run(dir, "config", "include.path", "../evil.cfg")
	}, []string{`.git/config: include.path now points at "../evil.cfg"`}},
	{"includeIf", func(t *testing.T, dir string, run func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "evil.cfg"), "[core]\n\tpager = touch PLANTED\n", 0o644)
		run(dir, "config", "includeIf.gitdir:/.path", "../evil.cfg")
	}, []string{`.git/config: includeif.gitdir:/.path now points at "../evil.cfg"`}},
	{"alias", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "config", "alias.st", "!touch PLANTED")
	}, []string{`.git/config: alias.st was added: "!touch PLANTED"`}},
	{"filter and textconv", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "config", "filter.x.clean", "touch PLANTED")
		run(dir, "config", "diff.x.textconv", "touch PLANTED")
	}, []string{`diff.x.textconv was set`, `filter.x.clean was set`}},
	{"an ordinary key", func(t *testing.T, dir string, run func(string, ...string) string) {
		run(dir, "config", "user.name", "Mallory")
	}, []string{`.git/config: other settings changed (user.name)`}},
	{"config.worktree", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/config.worktree"), "[core]\n\tsshCommand = touch PLANTED\n", 0o644)
	}, []string{".git/config.worktree was added", `.git/config.worktree: core.sshcommand was set to "touch PLANTED"`}},
	{"info/attributes", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/info/attributes"), "* diff=x\n", 0o644)
	}, []string{".git/info/attributes was added"}},
	{"info/exclude", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, ".git/info/exclude"), "*.secret\n", 0o644)
	}, []string{".git/info/exclude was changed"}},
	{"info replaced by a link", func(t *testing.T, dir string, _ func(string, ...string) string) {
		writeMode(t, filepath.Join(dir, "myinfo/attributes"), "* filter=x\n", 0o644)
		if err := os.RemoveAll(filepath.Join(dir, ".git/info")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../myinfo", filepath.Join(dir, ".git/info")); err != nil {
			t.Fatal(err)
		}
	}, []string{`.git/info was replaced by a link to "../myinfo"`}},
}

// TestGuardCatchesAndRestores plants each kind of program-running change
// in a fresh repository, checks that the guard names it, restores, and
// checks with the git binary that the configuration git reads and the
// hooks folder are as they were. Each case runs twice: with the files just
// made (every one read again by Check) and with a clock that trusts the
// lstat data of every file (only files whose lstat data changed are read
// again, guard_stat.go).
func TestGuardCatchesAndRestores(t *testing.T) {
	t.Parallel()
	for _, c := range guardCases {
		for _, trusted := range []bool{false, true} {
			name := c.name
			if trusted {
				name += " (lstat trusted)"
			}
			t.Run(name, func(t *testing.T) { testGuardCase(t, c, trusted, false) })
		}
		t.Run(c.name+" (copy encoded and decoded)", func(t *testing.T) { testGuardCase(t, c, true, true) })
	}
}

// testGuardCase plants c's change and checks that the copy names and
// restores it; encoded: the copy used is the one Encode wrote, decoded,
// as a resume after a crash reads it.
func testGuardCase(t *testing.T, c guardCase, trusted, encoded bool) {
	t.Parallel()
	dir, r, run := guardRepo(t)
	if trusted {
		trustAll(t, r)
	}
	wantConfig := rawGit(t, dir, "config", "--list", "--show-origin")
	wantHooks := listTree(t, filepath.Join(dir, ".git/hooks"))
	s := record(t, r)
	if encoded {
		data, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if s, err = DecodeGitDirSnapshot(data); err != nil {
			t.Fatal(err)
		}
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Fatalf("changes before anything changed: %q", changes)
	}
	c.plant(t, dir, run)
	changes := mustCheck(t, s)
	if len(changes) != len(c.want) {
		t.Fatalf("changes %q, want %d of them like %q", changes, len(c.want), c.want)
	}
	for i, w := range c.want {
		if !strings.Contains(changes[i], w) {
			t.Errorf("change %d is %q, want it to contain %q", i, changes[i], w)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Fatalf("changes after Restore: %q", changes)
	}
	if got := rawGit(t, dir, "config", "--list", "--show-origin"); got != wantConfig {
		t.Errorf("git config after Restore:\n%s\nwant\n%s", got, wantConfig)
	}
	if got := listTree(t, filepath.Join(dir, ".git/hooks")); got != wantHooks {
		t.Errorf("hooks after Restore:\n%s\nwant\n%s", got, wantHooks)
	}
	// What the user runs next runs nothing planted.
	writeMode(t, filepath.Join(dir, "file.txt"), "x\n", 0o644)
	rawGit(t, dir, "status")
	rawGit(t, dir, "add", "file.txt")
	rawGit(t, dir, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m", "user commit")
	if _, err := os.Stat(filepath.Join(dir, "PLANTED")); err == nil {
		t.Fatal("a planted program ran after Restore")
	}
}

// listTree lists a folder's entries with their modes and contents.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data[:min(len(data), 40)]))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGuardIncludedFiles: a file the config already includes is guarded
// like the config itself, and so is the folder core.hooksPath names.
func TestGuardIncludedFiles(t *testing.T) {
	t.Parallel()
	dir, r, run := guardRepo(t)
	writeMode(t, filepath.Join(dir, "common.cfg"), "[user]\n\tname = Ada\n[include]\n\tpath = nested.cfg\n", 0o644)
	writeMode(t, filepath.Join(dir, "nested.cfg"), "[color]\n\tui = auto\n", 0o644)
	writeMode(t, filepath.Join(dir, ".githooks/pre-commit"), "#!/bin/sh\nexit 0\n", 0o755)
	run(dir, "config", "include.path", "../common.cfg")
	run(dir, "config", "core.hooksPath", ".githooks")
	wantConfig := rawGit(t, dir, "config", "--list", "--show-origin")
	s := record(t, r)

	writeMode(t, filepath.Join(dir, "common.cfg"), "[user]\n\tname = Ada\n[include]\n\tpath = nested.cfg\n[core]\n\tfsmonitor = touch PLANTED\n", 0o644)
	writeMode(t, filepath.Join(dir, "nested.cfg"), "[color]\n\tui = auto\n[alias]\n\tst = !touch PLANTED\n", 0o644)
	writeMode(t, filepath.Join(dir, ".githooks/pre-commit"), plantedHook, 0o755)
	writeMode(t, filepath.Join(dir, ".githooks/post-checkout"), plantedHook, 0o755)
	changes := mustCheck(t, s)
	want := []string{
		`common.cfg: core.fsmonitor was set to "touch PLANTED"`,
		`nested.cfg: alias.st was added: "!touch PLANTED"`,
		".githooks/post-checkout was added (executable)",
		".githooks/pre-commit was changed",
	}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Fatalf("changes after Restore: %q", changes)
	}
	if got := rawGit(t, dir, "config", "--list", "--show-origin"); got != wantConfig {
		t.Errorf("git config after Restore:\n%s\nwant\n%s", got, wantConfig)
	}
	if _, err := os.Stat(filepath.Join(dir, ".githooks/post-checkout")); err == nil {
		t.Error("an added hook is still there")
	}
}

// TestGuardLinkedWorkTree: in a linked work tree (.git is a file), the
// common directory's hooks and config are guarded, and so are the work
// tree's own config.worktree and the .git file.
func TestGuardLinkedWorkTree(t *testing.T) {
	t.Parallel()
	dir, _, run := guardRepo(t)
	run(dir, "commit", "-q", "--allow-empty", "-m", "first")
	linked := filepath.Join(t.TempDir(), "linked")
	run(dir, "worktree", "add", "-q", linked)
	r := mustOpen(t, linked)
	s := record(t, r)

	writeMode(t, filepath.Join(dir, ".git/hooks/pre-commit"), plantedHook, 0o755)
	run(linked, "config", "core.fsmonitor", "touch PLANTED")
	gitDir := strings.TrimSpace(run(linked, "rev-parse", "--absolute-git-dir"))
	writeMode(t, filepath.Join(gitDir, "config.worktree"), "[core]\n\teditor = touch PLANTED\n", 0o644)
	dotGit := filepath.Join(linked, ".git")
	orig, err := os.ReadFile(dotGit)
	if err != nil {
		t.Fatal(err)
	}
	writeMode(t, dotGit, "gitdir: /tmp/elsewhere\n", 0o644)

	changes := strings.Join(mustCheck(t, s), "\n")
	for _, w := range []string{
		".git was changed",
		filepath.Join(dir, ".git/hooks/pre-commit") + " was added",
		filepath.Join(dir, ".git/config") + `: core.fsmonitor was set to "touch PLANTED"`,
		filepath.Join(gitDir, "config.worktree") + `: core.editor was set to "touch PLANTED"`,
	} {
		if !strings.Contains(changes, w) {
			t.Errorf("changes:\n%s\nwant one containing %q", changes, w)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dotGit); string(got) != string(orig) {
		t.Errorf(".git after Restore: %q, want %q", got, orig)
	}
	if changes := mustCheck(t, s); len(changes) != 0 {
		t.Fatalf("changes after Restore: %q", changes)
	}
}

// TestGuardGitDirRemoved: a .git folder that is gone cannot be restored,
// and Restore says so rather than pretending.
func TestGuardGitDirRemoved(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	s := record(t, r)
	if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "old-git")); err != nil {
		t.Fatal(err)
	}
	changes := mustCheck(t, s)
	if len(changes) == 0 || changes[0] != ".git was removed" {
		t.Fatalf("changes %q, want .git was removed first", changes)
	}
	if err := s.Restore(); err == nil || !strings.Contains(err.Error(), "cannot restore") {
		t.Fatalf("Restore: %v, want an error saying it cannot restore", err)
	}
}

// TestGuardTooBig: a hooks folder too big to copy is an error, not a
// silent gap.
func TestGuardTooBig(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	writeMode(t, filepath.Join(dir, ".git/hooks/huge"), strings.Repeat("x", maxGuardBytes+1), 0o644)
	if _, err := r.GuardGitDir(); err == nil || !strings.Contains(err.Error(), "cannot keep a copy") {
		t.Fatalf("GuardGitDir: %v, want a size error", err)
	}
}

func TestNamesProgram(t *testing.T) {
	t.Parallel()
	for k, want := range map[string]bool{
		"core.fsmonitor": true, "core.hookspath": true, "alias.st": true, "filter.lfs.clean": true,
		"diff.x.textconv": true, "diff.x.command": true, "merge.x.driver": true, "include.path": true,
		"includeif.gitdir:/x/.path": true, "credential.helper": true, "credential.https://x.helper": true,
		"gpg.program": true, "sequence.editor": true, "pager.log": true, "remote.origin.uploadpack": true,
		"user.name": false, "core.filemode": false, "remote.origin.url": false, "diff.x.binary": false,
		"color.ui": false, "branch.main.merge": false,
	} {
		if got := namesProgram(k); got != want {
			t.Errorf("namesProgram(%q) = %v, want %v", k, got, want)
		}
	}
}

// writeRestored goes through grub's one atomic writer: a link in place of
// the file is replaced, not followed, and no temp file is left; the temp
// name is atomicfile's (checked through a folder that refuses the rename:
// the failure names the target, as atomicfile's errors do).
func TestWriteRestoredIsAtomicfile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "pre-commit")
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	if err := writeRestored(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("the link's target was written: %q", data)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
		t.Errorf("restored file: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want the file alone", len(entries))
	}
	// A folder in the way: atomicfile's error names the target path.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeRestored(p, []byte("x"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), "write "+p+":") {
		t.Errorf("writeRestored over a folder = %v, want atomicfile's error naming %s", err, p)
	}
}
