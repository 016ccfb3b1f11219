package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestProtectedPaths(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := []string{
		filepath.Join(ws, ".git"), // a folder: stays writable
		filepath.Join(ws, ".git", "hooks"),
		filepath.Join(ws, ".git", "config"),
		filepath.Join(ws, ".git", "config") + "/", // a duplicate
		filepath.Join(ws, ".git", "info", "attributes"),
		"/elsewhere/shared.cfg",
		ws,               // a core.hooksPath of "."
		filepath.Dir(ws), // or ".."
		"",               // nothing
	}
	harness := []string{".grub/t1/state.json", filepath.Join(ws, ".grub", "t1", "lock")}
	got := ProtectedPaths(ws+"/", git, harness)
	want := []string{
		filepath.Join(ws, ".git", "hooks"),
		filepath.Join(ws, ".git", "config"),
		filepath.Join(ws, ".git", "info", "attributes"),
		"/elsewhere/shared.cfg",
		filepath.Join(ws, ".grub", "t1", "state.json"),
		filepath.Join(ws, ".grub", "t1", "lock"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("ProtectedPaths =\n %q\nwant\n %q", got, want)
	}

	// A linked work tree's .git is a file naming the git directory: it
	// is protected, like the guard keeps it.
	linked := t.TempDir()
	if err := os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: /repo/.git/worktrees/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProtectedPaths(linked, []string{filepath.Join(linked, ".git")}, nil); len(got) != 1 {
		t.Errorf("ProtectedPaths for a .git file = %q, want it kept", got)
	}
}

func TestWrapReadOnly(t *testing.T) {
	p := Policy{Mode: ModeReadOnly, ReadOnly: []string{"/w/.git/hooks", "/w/.grub/t 1/state.json"}}
	got := Wrap("/bin/grub", p, []string{"true"})
	want := []string{"/bin/grub", ExecCommand, "--mode=read-only", "--ro=/w/.git/hooks", "--ro=/w/.grub/t 1/state.json", "--", "true"}
	if !slices.Equal(got, want) {
		t.Fatalf("Wrap =\n %q\nwant\n %q", got, want)
	}
	back, _, err := parseArgs(got[2:])
	if err != nil || !slices.Equal(back.ReadOnly, p.ReadOnly) {
		t.Errorf("parseArgs(Wrap(p)).ReadOnly = %q, %v; want %q", back.ReadOnly, err, p.ReadOnly)
	}
	// Read-only paths alone do not route a command through the launcher.
	if got := Wrap("/bin/grub", Policy{Mode: ModeOff, ReadOnly: p.ReadOnly}, []string{"true"}); !slices.Equal(got, []string{"true"}) {
		t.Errorf("Wrap with mode off = %q, want the command unchanged", got)
	}
	var stderr bytes.Buffer
	if code := launch([]string{"--mode=read-only", "--ro=rel", "--", "true"}, &stderr); code != ExitCannotRun || !strings.Contains(stderr.String(), `read-only path "rel" is not an absolute path`) {
		t.Errorf("a relative read-only path: exit %d, %q", code, stderr.String())
	}
}

func TestWithoutNamespaces(t *testing.T) {
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", ReadOnly: []string{"/w/.git/hooks"}}
	yes := func() (bool, string) { return true, "" }
	no := func() (bool, string) { return false, "no namespaces here" }
	if got, w := withoutNamespaces(p, "", yes); len(got.ReadOnly) != 1 || w != "" {
		t.Errorf("with namespaces: %+v, %q; want the policy unchanged", got, w)
	}
	got, w := withoutNamespaces(p, "old ABI", no)
	if got.ReadOnly != nil || w != "old ABI; no namespaces here" {
		t.Errorf("without namespaces: %+v, %q; want no read-only paths and both warnings", got, w)
	}
	// Credentials to hide are dropped too, those that exist named.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".netrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p = Policy{Mode: ModeReadOnly, Hide: CredentialPaths(home)}
	got, w = withoutNamespaces(p, "", no)
	if got.Hide != nil || w != "no namespaces here; sandboxed commands can read "+filepath.Join(home, ".netrc") {
		t.Errorf("without namespaces: %+v, %q; want nothing hidden and .netrc named", got, w)
	}
}

// TestWholeGitDirs: the git directories are listed absolute and clean;
// one that holds the workspace is left out (it would make it read-only).
func TestWholeGitDirs(t *testing.T) {
	ws := "/home/u/repo"
	got := WholeGitDirs(ws, []string{"/home/u/repo/.git", ".git/", "/home/u/main/.git/worktrees/x/../x", "/home/u", ""})
	want := []string{"/home/u/repo/.git", "/home/u/repo/.git", "/home/u/main/.git/worktrees/x"}
	if !slices.Equal(got, want) {
		t.Errorf("WholeGitDirs = %q, want %q", got, want)
	}
}
