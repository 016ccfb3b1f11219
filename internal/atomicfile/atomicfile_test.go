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
