package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMasks: what the launcher covers: the existing entries, a
// pattern's matches, symbolic links resolved, shown paths and what holds
// the workspace or the temp directory left out, inner paths dropped,
// outermost first, nothing in mode off.
func TestMasks(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	ws := filepath.Join(home, "src", "proj")
	tmp := filepath.Join(base, "tmp")
	t.Setenv("TMPDIR", tmp)
	for _, d := range []string{ws, tmp, filepath.Join(home, ".ssh"), filepath.Join(home, ".cargo"), filepath.Join(base, "real-aws")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id", ".netrc", ".cargo/credentials", ".cargo/credentials.toml", ".cargo/config.toml", ".npmrc"} {
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "real-aws"), filepath.Join(home, ".aws")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: ws,
		Hide: append(CredentialPaths(home), filepath.Join(home, ".ssh", "id"), filepath.Join(home, "src"), tmp, filepath.Join(home, ".netrc")),
		Show: []string{filepath.Join(home, ".npmrc")}}
	got := masks(p)
	want := []string{
		filepath.Join(home, ".ssh"),
		filepath.Join(home, ".netrc"),
		filepath.Join(base, "real-aws"),
		filepath.Join(home, ".cargo", "credentials"),
		filepath.Join(home, ".cargo", "credentials.toml"),
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("masks = %q\nwant    %q", got, want)
	}
	if got := masks(Policy{Mode: ModeOff, NoNetwork: true, Hide: p.Hide}); got != nil {
		t.Errorf("mode off hides %q", got)
	}
	if !needsNamespace(Policy{Mode: ModeReadOnly, Hide: []string{filepath.Join(home, ".netrc")}}) {
		t.Error("an existing hidden path does not need the namespace")
	}
	if needsNamespace(Policy{Mode: ModeReadOnly, Hide: []string{filepath.Join(home, ".kube")}}) {
		t.Error("a hidden path that does not exist needs the namespace")
	}
}
