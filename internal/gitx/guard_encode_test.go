package gitx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuardCopyWithoutHooksFolder: in a repository that has no
// .git/hooks folder, a copy kept on disk (encoded, then decoded by the
// next run) still names a pre-commit hook planted there and core.fsmonitor
// set in .git/config, and its Restore removes both.
func TestGuardCopyWithoutHooksFolder(t *testing.T) {
	t.Parallel()
	dir, r, _ := guardRepo(t)
	if err := os.RemoveAll(filepath.Join(dir, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	wantConfig := rawGit(t, dir, "config", "--list", "--show-origin")
	data, err := record(t, r).Encode()
	if err != nil {
		t.Fatal(err)
	}
	writeMode(t, filepath.Join(dir, ".git/hooks/pre-commit"), plantedHook, 0o755)
	rawGit(t, dir, "config", "core.fsmonitor", "touch PLANTED")
	s, err := DecodeGitDirSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	changes := strings.Join(mustCheck(t, s), "; ")
	for _, want := range []string{".git/hooks was added", "core.fsmonitor was set"} {
		if !strings.Contains(changes, want) {
			t.Errorf("changes %q lack %q", changes, want)
		}
	}
	if err := s.Restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git/hooks")); !os.IsNotExist(err) {
		t.Errorf("the planted hooks folder is still there (lstat: %v)", err)
	}
	if got := rawGit(t, dir, "config", "--list", "--show-origin"); got != wantConfig {
		t.Errorf("git config after Restore:\n%s\nwant\n%s", got, wantConfig)
	}
}

// TestDecodeGitDirSnapshotRefuses: a copy that is not one Encode wrote
// is an error, never a copy that guards less.
func TestDecodeGitDirSnapshotRefuses(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		``,
		`{"version":2,"workTree":"/w","roots":[],"entries":[]}`,
		`{"version":1,"workTree":"rel","roots":[],"entries":[]}`,
		`{"version":1,"workTree":"/w","roots":[{"path":"/w/.git/hooks","kind":"folder"}],"entries":[]}`,
		`{"version":1,"workTree":"/w","roots":[],"entries":[{"path":"/w/.git/../x","kind":"file"}]}`,
		`{"version":1,"workTree":"/w","roots":[],"entries":[{"path":"/w/.git/config","kind":"file","mode":2147484159}]}`,
	} {
		if _, err := DecodeGitDirSnapshot([]byte(data)); err == nil {
			t.Errorf("DecodeGitDirSnapshot(%q) took it", data)
		}
	}
}
