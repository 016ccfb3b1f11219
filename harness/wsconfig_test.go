package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each way a turn can touch .grub/config.toml is seen and put back: a
// change in place, a new file with the same bytes (a hard link could
// change them later), a link, a folder, a deletion, a creation.
func TestRestoreConfig(t *testing.T) {
	const orig = "max-iter = 12\n"
	tests := []struct {
		name   string
		before bool // a file was there when the turn started
		touch  func(t *testing.T, path string)
		want   string
	}{
		{"unchanged", true, func(*testing.T, string) {}, ""},
		{"changed in place", true, func(t *testing.T, p string) { appendTo(t, p, "on-turn = \"x\"\n") }, "was changed"},
		{"same bytes, new inode", true, func(t *testing.T, p string) {
			must(t, os.WriteFile(p+".new", []byte(orig), 0o644)) // while the old one exists: another inode
			must(t, os.Rename(p+".new", p))
		}, "was replaced by another file"},
		{"a link", true, func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/hostname", p))
		}, "was replaced by a symbolic link"},
		{"a folder", true, func(t *testing.T, p string) {
			must(t, os.Remove(p))
			must(t, os.Mkdir(p, 0o755))
		}, "was replaced by a folder"},
		{"deleted", true, func(t *testing.T, p string) { must(t, os.Remove(p)) }, "was deleted"},
		{"created", false, func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("on-turn = \"x\"\n"), 0o644)) }, "was created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Store{Root: t.TempDir()}
			path := s.WorkspaceConfigPath()
			must(t, os.MkdirAll(filepath.Dir(path), 0o755))
			if tt.before {
				must(t, os.WriteFile(path, []byte(orig), 0o644))
			}
			snap, err := s.SnapshotConfig()
			must(t, err)
			tt.touch(t, path)
			what, err := s.RestoreConfig(snap)
			must(t, err)
			if tt.want == "" && what != "" || !strings.Contains(what, tt.want) {
				t.Errorf("RestoreConfig says %q, want %q", what, tt.want)
			}
			fi, err := os.Lstat(path)
			switch {
			case !tt.before && err == nil:
				t.Error("a created file was left")
			case tt.before && (err != nil || !fi.Mode().IsRegular()):
				t.Errorf("not put back as a regular file: %v", err)
			case tt.before:
				if data, _ := os.ReadFile(path); string(data) != orig {
					t.Errorf("content %q", data)
				}
			}
		})
	}
}

func appendTo(t *testing.T, path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(text)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
