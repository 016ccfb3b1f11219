//go:build unix

package harness

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// outsideFile is a file outside the workspace with known content, standing
// for ~/.bashrc.
func outsideFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".bashrc")
	if err := os.WriteFile(p, []byte("# my bashrc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func assertUntouched(t *testing.T, p string) {
	t.Helper()
	if data, _ := os.ReadFile(p); string(data) != "# my bashrc\n" {
		t.Errorf("grub wrote outside the workspace, %s is now %q", p, data)
	}
}

// The repro: the agent replaces progress-log.md by a link to
// ~/.bashrc during a turn. grub's next append does not follow it: the log
// kept at the turn's start is put back, with every earlier entry and the
// agent's own appended note, and the append lands there.
func TestProgressLogLinkIsNotFollowed(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if err := s.AppendProgress(st.ID, "## entry 1"); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepProgressLog(st.ID); err != nil {
		t.Fatal(err)
	}
	log := s.Path(st.ID, FileProgressLog)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("agent's note\n") // a legal append by the agent
	f.Close()
	bashrc := outsideFile(t)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bashrc, log); err != nil {
		t.Fatal(err)
	}
	bad, err := s.RepairProgressLog(st.ID)
	if err != nil || bad == nil || bad.Kind != "a symbolic link" {
		t.Fatalf("RepairProgressLog = %v, %v; want a symbolic link reported", bad, err)
	}
	if err := s.AppendProgress(st.ID, "## entry 2\ntouch /tmp/PWNED #\n"); err != nil {
		t.Fatal(err)
	}
	assertUntouched(t, bashrc)
	fi, err := os.Lstat(log)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("progress-log.md is not a regular file after the repair: %v, %v", fi, err)
	}
	data, _ := os.ReadFile(log)
	for _, want := range []string{"# ", "## entry 1", "agent's note", "## entry 2"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("restored log lacks %q:\n%s", want, data)
		}
	}
}

// Without a repair by the referee, the append itself puts the log back
// and says so; a folder, a hard link to an outside file and a deleted log
// are handled the same way.
func TestAppendProgressRepairs(t *testing.T) {
	cases := map[string]func(log, outside string) error{
		"symlink":   func(log, outside string) error { return os.Symlink(outside, log) },
		"hard link": func(log, outside string) error { return os.Link(outside, log) },
		"folder":    func(log, outside string) error { return os.Mkdir(log, 0o755) },
		"deleted":   func(log, outside string) error { return nil },
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			st := mustCreate(t, s, newState("g"))
			if err := s.AppendProgress(st.ID, "## entry 1"); err != nil {
				t.Fatal(err)
			}
			if err := s.KeepProgressLog(st.ID); err != nil {
				t.Fatal(err)
			}
			log := s.Path(st.ID, FileProgressLog)
			bashrc := outsideFile(t)
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
			if err := plant(log, bashrc); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendProgress(st.ID, "## entry 2"); err != nil {
				t.Fatal(err)
			}
			assertUntouched(t, bashrc)
			data, _ := os.ReadFile(log)
			if !strings.Contains(string(data), "## entry 1") || !strings.Contains(string(data), "## entry 2") {
				t.Errorf("log after the repair:\n%s", data)
			}
			if name != "deleted" && !strings.Contains(string(data), "grub put its log back") {
				t.Errorf("the repair is not noted in the log:\n%s", data)
			}
		})
	}
}

// A symlinked turns/ folder is removed and made again before the prompt is
// written: no prompt file lands in the outside folder.
func TestWritePromptTurnsLink(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	outside := t.TempDir()
	if err := os.Symlink(outside, s.Path(st.ID, DirTurns)); err != nil {
		t.Fatal(err)
	}
	p, err := s.WritePrompt(st.ID, 3, "prompt")
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("WritePrompt wrote %s in the link's target", entries[0].Name())
	}
	if fi, err := os.Lstat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		t.Errorf("turns is not a real folder: %v %v", fi, err)
	}
	// A link where the transcript goes is removed too.
	bashrc := outsideFile(t)
	if err := os.Symlink(bashrc, s.TranscriptPath(st.ID, 4)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WritePrompt(st.ID, 4, "prompt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.TranscriptPath(st.ID, 4)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link in place of the transcript is still there: %v", err)
	}
}

func TestCheckTurnDirs(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	outside := t.TempDir()
	if err := os.Symlink(outside, s.Path(st.ID, DirSpill)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(st.ID, DirTurns), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad, err := s.CheckTurnDirs(st.ID)
	if err != nil || len(bad) != 2 {
		t.Fatalf("CheckTurnDirs = %v, %v; want turns and spill reported", bad, err)
	}
	for _, name := range SkippedDirs() {
		if fi, err := os.Lstat(s.Path(st.ID, name)); err != nil || !fi.IsDir() {
			t.Errorf("%s is not a real folder: %v %v", name, fi, err)
		}
	}
	if bad, err := s.CheckTurnDirs(st.ID); err != nil || len(bad) != 0 {
		t.Errorf("second CheckTurnDirs = %v, %v", bad, err)
	}
}

// The files grub replaces are never written through a link; the lock is
// not opened through one; a task folder behind a link is not written at
// all.
func TestWritersDoNotFollowLinks(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	for _, name := range []string{FileState, FileChecklist, FileLock, FileControlLock} {
		bashrc := outsideFile(t)
		p := s.Path(st.ID, name)
		if name == FileControlLock { // in the private folder
			control, err := s.ControlPath(st.ID)
			if err != nil {
				t.Fatal(err)
			}
			p = filepath.Join(filepath.Dir(control), name)
		}
		os.Remove(p)
		if err := os.Symlink(bashrc, p); err != nil {
			t.Fatal(err)
		}
		switch name {
		case FileState:
			if err := s.SaveState(st); err != nil {
				t.Fatal(err)
			}
		case FileChecklist:
			if err := s.WriteChecklist(st.ID, "g", nil); err != nil {
				t.Fatal(err)
			}
		case FileLock:
			l, err := s.Lock(st.ID)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
		case FileControlLock:
			if err := s.AppendControl(st.ID, ControlRequest{Kind: "pause"}); err != nil {
				t.Fatal(err)
			}
		}
		assertUntouched(t, bashrc)
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is not a regular file after grub wrote it: %v %v", name, fi, err)
		}
	}

	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(s.Dir(st.ID), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, s.Dir(st.ID)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(moved, FileProgressLog))
	if err := s.AppendProgress(st.ID, "x"); err == nil {
		t.Error("AppendProgress wrote through a linked task folder")
	}
	if err := s.SaveState(st); err == nil {
		t.Error("SaveState wrote through a linked task folder")
	}
	if after, _ := os.ReadFile(filepath.Join(moved, FileProgressLog)); string(after) != string(before) {
		t.Error("the log behind the linked task folder was written")
	}
}

// Control characters from the agent's text are escaped in the log file.
func TestAppendProgressEscapes(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if err := s.AppendProgress(st.ID, "- Summary: \x1b]0;pwn\a\x1b[2J\tok\nnext"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path(st.ID, FileProgressLog))
	if strings.ContainsAny(string(data), "\x1b\a") || !strings.Contains(string(data), "\tok\nnext") {
		t.Errorf("log = %q", data)
	}
}

// A log kept already (the keep is its second name) is not linked again:
// each turn's start would otherwise remove and make a name (two metadata
// writes, slow on some disks). A log written anew is kept anew.
func TestKeepProgressLogKeepsOnce(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	keep, log := s.Path(st.ID, fileKeep), s.Path(st.ID, FileProgressLog)
	if err := s.KeepProgressLog(st.ID); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Lstat(keep)
	time.Sleep(20 * time.Millisecond) // past the file system's time stamp resolution
	if err := s.KeepProgressLog(st.ID); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Lstat(keep)
	if runtime.GOOS == "linux" && stampOf(before) != stampOf(after) { // change times are compared on Linux only
		t.Errorf("the keep was made again for a log kept already")
	}
	if err := os.Remove(log); err != nil { // an editor's save: a new file
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte("# new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepProgressLog(st.ID); err != nil {
		t.Fatal(err)
	}
	l, _ := os.Lstat(log)
	if k, err := os.Lstat(keep); err != nil || !os.SameFile(l, k) {
		t.Errorf("the keep is not the new log: %v", err)
	}
}
