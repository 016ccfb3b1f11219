package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// hook sets beforeRename for the length of the test.
func hook(t *testing.T, fn func(tmp string) error) {
	t.Helper()
	beforeRename = fn
	t.Cleanup(func() { beforeRename = nil })
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"one", "two"} {
		if err := WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != content {
			t.Errorf("content %q, want %q", got, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only f.json", len(entries))
	}
}

func TestWriteFilePermissions(t *testing.T) {
	dir := t.TempDir()
	for _, perm := range []os.FileMode{0o600, 0o755} {
		p := filepath.Join(dir, "f")
		if err := WriteFile(p, []byte("x"), perm); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != perm {
			t.Errorf("mode %v, want %v", fi.Mode().Perm(), perm)
		}
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("WriteFile into a missing folder succeeded")
	}
}

// A write that fails before the rename leaves the old file and no temp file.
func TestWriteFileFailsBeforeRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	failure := errors.New("simulated failure")
	var tmpSeen string
	hook(t, func(tmp string) error {
		tmpSeen = tmp
		if _, err := os.Stat(tmp); err != nil {
			t.Errorf("temp file missing before rename: %v", err)
		}
		return failure
	})
	if err := WriteFile(p, []byte("new"), 0o644); !errors.Is(err, failure) {
		t.Fatalf("WriteFile = %v, want the simulated failure", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("content %q after a failed write, want the old one", got)
	}
	if filepath.Dir(tmpSeen) != dir {
		t.Errorf("temp file %s is not in the target's folder", tmpSeen)
	}
	if _, err := os.Stat(tmpSeen); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temp file %s left behind", tmpSeen)
	}
	beforeRename = nil
	if err := WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("content %q after a clean write, want new", got)
	}
}

// A crash just before the rename leaves the old file whole and one temp
// file, named so that TempGlob (the .gitignore rule) matches it.
func TestCrashBeforeRenameLeavesOnlyATempFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "feature-list.json")
	if err := WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	type crash struct{}
	hook(t, func(string) error { panic(crash{}) })
	func() {
		defer func() {
			if r := recover(); r != (crash{}) {
				t.Fatalf("recovered %v, want the simulated crash", r)
			}
		}()
		_ = WriteFile(p, []byte("new"), 0o644)
	}()
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("content %q after a crash, want the old one", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var temps []string
	for _, e := range entries {
		if e.Name() != "feature-list.json" {
			temps = append(temps, e.Name())
		}
	}
	if len(temps) != 1 {
		t.Fatalf("after a crash the folder holds %v besides the target, want one temp file", temps)
	}
	name := temps[0]
	if ok, _ := path.Match(TempPattern("feature-list.json"), name); !ok {
		t.Errorf("temp file %q does not match %q", name, TempPattern("feature-list.json"))
	}
	if ok, _ := path.Match(TempGlob, name); !ok {
		t.Errorf("temp file %q does not match TempGlob %q", name, TempGlob)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, name)); string(data) != "new" {
		t.Errorf("temp file holds %q, want the new content, synced", data)
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Error(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("SyncDir of a missing folder succeeded")
	}
}

// openRoot opens dir as an os.Root for the length of the test.
func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

func TestWriteFileInReplaces(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, dir)
	for _, content := range []string{"one", "two"} {
		if err := WriteFileIn(root, "sub/f.txt", []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "sub", "f.txt")); string(got) != content {
			t.Errorf("content %q, want %q", got, content)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "sub", "f.txt"))
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v (%v), want 0640", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sub")); len(entries) != 1 {
		t.Errorf("sub holds %d entries, want only f.txt", len(entries))
	}
	for _, bad := range []string{".", "sub/", "missing/f.txt"} {
		if err := WriteFileIn(root, bad, nil, 0o644); err == nil {
			t.Errorf("WriteFileIn(%q) succeeded", bad)
		}
	}
}

// A link on the way that leads out of the root is refused, and nothing is
// written where it points; a link in place of the file itself is replaced,
// not written through.
func TestWriteFileInRefusesALinkOut(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(dir, "rel")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(dir, "file.txt")); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, dir)
	for _, name := range []string{"out/pwned.txt", "rel/pwned.txt"} {
		if err := WriteFileIn(root, name, []byte("pwned"), 0o644); err == nil {
			t.Errorf("WriteFileIn(%q) through a link out of the root succeeded", name)
		}
	}
	if err := WriteFileIn(root, "file.txt", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "file.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("file.txt after the write: %v (%v), want a regular file in place of the link", fi, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the outside folder holds %v, want nothing", entries)
	}
}

// A crash just before the rename in WriteFileIn leaves the old file whole
// and one temp file in the target's folder, matching TempPattern.
func TestWriteFileInCrashLeavesOnlyATempFile(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	root := openRoot(t, dir)
	if err := WriteFileIn(root, "sub/state.json", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	type crash struct{}
	var tmpSeen string
	hook(t, func(tmp string) error { tmpSeen = tmp; panic(crash{}) })
	func() {
		defer func() {
			if r := recover(); r != (crash{}) {
				t.Fatalf("recovered %v, want the simulated crash", r)
			}
		}()
		_ = WriteFileIn(root, "sub/state.json", []byte("new"), 0o644)
	}()
	if got, _ := os.ReadFile(filepath.Join(sub, "state.json")); string(got) != "old" {
		t.Errorf("content %q after a crash, want the old one", got)
	}
	if filepath.Dir(tmpSeen) != sub {
		t.Errorf("the hook saw %s, not a path in the target's folder %s", tmpSeen, sub)
	}
	entries, _ := os.ReadDir(sub)
	var temps []string
	for _, e := range entries {
		if e.Name() != "state.json" {
			temps = append(temps, e.Name())
		}
	}
	if len(temps) != 1 || temps[0] != filepath.Base(tmpSeen) {
		t.Fatalf("after a crash the folder holds %v besides the target, want the one temp file %s", temps, filepath.Base(tmpSeen))
	}
	if ok, _ := path.Match(TempPattern("state.json"), temps[0]); !ok {
		t.Errorf("temp file %q does not match %q", temps[0], TempPattern("state.json"))
	}
	if data, _ := os.ReadFile(tmpSeen); string(data) != "new" {
		t.Errorf("temp file holds %q, want the new content", data)
	}
}

// WriteFileUnsynced replaces the file as WriteFile does: the old content
// stays whole until the rename, and no temp file is left.
func TestWriteFileUnsyncedReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "0001.prompt.md")
	if err := WriteFileUnsynced(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	hook(t, func(tmp string) error {
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("before the rename the file holds %q, want the old content", got)
		}
		return nil
	})
	if err := WriteFileUnsynced(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if got, _ := os.ReadFile(p); err != nil || string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after WriteFileUnsynced: %q, %v, %v", got, fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(entries))
	}
}
