package harness

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/templates"
)

// threeFeatures is a valid feature list of three pending features.
func threeFeatures() *featurelist.List {
	l := &featurelist.List{Version: 1, Goal: "g"}
	for _, id := range []string{"fa", "fb", "fc"} {
		l.Features = append(l.Features, featurelist.Feature{ID: id, Category: "functional", Description: "does " + id, Steps: []string{"run " + id}})
	}
	return l
}

func TestTurnFiles(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	p, err := s.WritePrompt(st.ID, 7, "do the thing\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(s.Dir(st.ID), "turns", "0007.prompt.md"); p != want {
		t.Errorf("WritePrompt path = %q, want %q", p, want)
	}
	if data, _ := os.ReadFile(p); string(data) != "do the thing\n" {
		t.Errorf("prompt file holds %q", data)
	}
	if got, want := s.TranscriptPath(st.ID, 12), filepath.Join(s.Dir(st.ID), "turns", "0012.jsonl"); got != want {
		t.Errorf("TranscriptPath = %q, want %q", got, want)
	}
	if got, want := s.SpillDir(st.ID), filepath.Join(s.Dir(st.ID), "spill"); got != want {
		t.Errorf("SpillDir = %q, want %q", got, want)
	}
	if _, err := s.WritePrompt("nope", 1, "x"); err == nil {
		t.Error("WritePrompt for an invalid id succeeded")
	}
}

func TestProtectedFiles(t *testing.T) {
	p := ProtectedFiles()
	for _, name := range []string{FileState, FileTurnLedger, FileLock, FileControl, FileControlLock, FileAcceptedList, FileAcceptedChanges, fileAcceptedNext} {
		if !strings.HasPrefix(p[name], name+" ") {
			t.Errorf("ProtectedFiles()[%q] = %q, want a reason naming the file", name, p[name])
		}
	}
	if len(p) != 8 {
		t.Errorf("ProtectedFiles() has %d names, want 8", len(p))
	}
	p[FileState] = "changed"
	if ProtectedFiles()[FileState] == "changed" {
		t.Error("ProtectedFiles returns a shared map")
	}
}

func TestRestoreFeatureList(t *testing.T) {
	want, err := featurelist.Marshal(threeFeatures())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
		mode  os.FileMode
	}{
		{"overwrites a tampered file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`{"broken`), 0o644); err != nil {
				t.Fatal(err)
			}
		}, 0o644},
		{"recreates a deleted file", func(t *testing.T, path string) {}, 0o644},
		{"keeps the file mode", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(`x`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, 0o600},
		{"replaces a folder", func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Join(path, "inner"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, 0o644},
		{"replaces a symbolic link", func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "elsewhere.json")
			if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Skip(err)
			}
		}, 0o644},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			st := mustCreate(t, s, newState("g"))
			path := s.Path(st.ID, FileFeatureList)
			c.setup(t, path)
			before, _ := os.ReadDir(s.Dir(st.ID))
			if err := s.RestoreFeatureList(st.ID, threeFeatures()); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != c.mode {
				t.Errorf("mode = %v, want a regular file with %v", fi.Mode(), c.mode)
			}
			got, err := s.ReadFeatureList(st.ID)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("restored file (%v):\n%s\nwant:\n%s", err, got, want)
			}
			after, _ := os.ReadDir(s.Dir(st.ID))
			if len(after) != len(before) && !(len(after) == len(before)+1 && c.name == "recreates a deleted file") {
				t.Errorf("folder went from %v to %v: temp files left behind?", before, after)
			}
		})
	}
}

func TestRestoreFeatureListErrors(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if err := s.RestoreFeatureList(st.ID, &featurelist.List{Version: 1}); err == nil {
		t.Error("restoring an invalid list succeeded")
	}
	if _, err := s.ReadFeatureList(st.ID); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("restoring an invalid list wrote the file (read: %v)", err)
	}
	if err := os.RemoveAll(s.Dir(st.ID)); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreFeatureList(st.ID, threeFeatures()); err == nil || !strings.Contains(err.Error(), FileFeatureList) {
		t.Errorf("restoring into a missing task folder = %v, want an error naming the file", err)
	}
}

func TestRestoreFeatureListIfChanged(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	l := threeFeatures()
	if err := s.RestoreFeatureListIfChanged(st.ID, l); err != nil {
		t.Fatal(err)
	}
	path := s.Path(st.ID, FileFeatureList)
	old := time.Unix(1_000_000, 0)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreFeatureListIfChanged(st.ID, l); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Error("an unchanged feature list was written again")
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreFeatureListIfChanged(st.ID, l); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReadFeatureList(st.ID); !bytes.Contains(got, []byte(`"fc"`)) {
		t.Errorf("a changed feature list was not restored: %s", got)
	}
}

func TestInitScript(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if data, err := s.ReadInitScript(st.ID); err != nil || string(data) != templates.InitScript {
		t.Fatalf("ReadInitScript = %q, %v; want the starter", data, err)
	}
	path := s.Path(st.ID, FileInitScript)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadInitScript(st.ID); err == nil {
		t.Fatal("ReadInitScript of a folder succeeded")
	}
	if err := s.ResetInitScript(st.ID); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o755 {
		t.Fatalf("after ResetInitScript: %v, %v", fi, err)
	}
	if data, _ := s.ReadInitScript(st.ID); string(data) != templates.InitScript {
		t.Errorf("ResetInitScript wrote %q", data)
	}
}

func TestWatchControl(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	changed := make(chan struct{}, 16)
	stop, err := s.WatchControl(st.ID, func() { changed <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := s.AppendProgress(st.ID, "not a control request"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlPauseNow}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no call after control.json was written")
	}
	if _, err := s.WatchControl("0badf00d", func() {}); err == nil {
		t.Error("watching a missing task folder succeeded")
	}
}

// The referee's files are read only as regular files: a symbolic link,
// even to a valid file outside the workspace, a folder or a fifo in their
// place is a *NotRegularError naming the file and what is there, and its
// target is never read. RestoreInitScript puts a regular file back and
// leaves the link's target alone.
func TestRefereeFilesMustBeRegular(t *testing.T) {
	valid, err := featurelist.Marshal(threeFeatures())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "list.json")
	if err := os.WriteFile(outside, valid, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind  string
		setup func(t *testing.T, path string)
	}{
		{"a symbolic link", func(t *testing.T, path string) {
			if err := os.Symlink(outside, path); err != nil {
				t.Skip(err)
			}
		}},
		{"a folder", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a fifo", func(t *testing.T, path string) {
			if err := mkfifo(path); err != nil {
				t.Skip(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			s := newStore(t)
			st := mustCreate(t, s, newState("g"))
			for _, name := range []string{FileFeatureList, FileInitScript} {
				path := s.Path(st.ID, name)
				_ = os.Remove(path)
				c.setup(t, path)
			}
			reads := map[string]func() error{
				"ReadFeatureList": func() error { _, err := s.ReadFeatureList(st.ID); return err },
				"LoadFeatureList": func() error { _, _, err := s.LoadFeatureList(st.ID); return err },
				"ReadInitScript":  func() error { _, err := s.ReadInitScript(st.ID); return err },
			}
			for name, read := range reads {
				var nr *NotRegularError
				if err := read(); !errors.As(err, &nr) || nr.Kind != c.kind || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("%s = %v, want a *NotRegularError saying it is %s", name, err, c.kind)
				}
			}
			if err := s.RestoreInitScript(st.ID, []byte("echo ok\n")); err != nil {
				t.Fatal(err)
			}
			if data, err := s.ReadInitScript(st.ID); err != nil || string(data) != "echo ok\n" {
				t.Errorf("after RestoreInitScript: %q, %v", data, err)
			}
			if err := s.RestoreFeatureList(st.ID, threeFeatures()); err != nil {
				t.Fatal(err)
			}
			if data, err := s.ReadFeatureList(st.ID); err != nil || !bytes.Equal(data, valid) {
				t.Errorf("after RestoreFeatureList: %q, %v", data, err)
			}
			if data, _ := os.ReadFile(outside); !bytes.Equal(data, valid) {
				t.Errorf("the link's target was changed: %q", data)
			}
		})
	}
}
