package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keptTask is a task with two log entries and two ledger lines, kept.
func keptTask(t *testing.T) (*Store, *State) {
	t.Helper()
	s := newStore(t)
	st := mustCreate(t, s, newState("keep the record"))
	for i := 1; i <= 2; i++ {
		if err := s.AppendProgress(st.ID, "## Turn "+string(rune('0'+i))+"\n- Failure: caught\n"); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendTurn(st.ID, TurnRecord{Iteration: i, Phase: PhaseExecution, Decision: "continue", Summary: "s",
			Status: StatusRunning, Time: time.Unix(0, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.KeepRecord(st.ID); err != nil {
		t.Fatal(err)
	}
	return s, st
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each attack on a record file is found, named and put back; the notes an
// agent appends after grub's last entry are not an attack, and are kept.
func TestCheckRecordAttacks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file string
		attack     func(path string) error
		want       string
	}{
		{"notes appended", FileProgressLog, func(p string) error { return appendRecord(p, "my note\n") }, ""},
		{"log entry rewritten", FileProgressLog, func(p string) error {
			return os.WriteFile(p, []byte(strings.Replace(read(t, p), "Failure: caught", "Note: clean!!", 1)), 0o644)
		}, "was rewritten"},
		{"log entry rewritten, notes appended", FileProgressLog, func(p string) error {
			return os.WriteFile(p, []byte(strings.Replace(read(t, p), "Failure: caught", "Note: clean!!", 1)+"my note\n"), 0o644)
		}, "was rewritten"},
		{"log truncated", FileProgressLog, func(p string) error { return os.Truncate(p, 5) }, "was truncated (5 of the"},
		{"log deleted", FileProgressLog, os.Remove, "was deleted"},
		{"log a folder", FileProgressLog, func(p string) error { os.Remove(p); return os.Mkdir(p, 0o755) }, "was replaced by a folder"},
		{"ledger line rewritten", FileTurnLedger, func(p string) error {
			return os.WriteFile(p, []byte(strings.Replace(read(t, p), `"iteration":1`, `"iteration":7`, 1)), 0o644)
		}, "was rewritten"},
		{"ledger line added", FileTurnLedger, func(p string) error { return appendRecord(p, "{}\n") }, "had 3 bytes added"},
		{"ledger a link", FileTurnLedger, func(p string) error {
			o := filepath.Join(t.TempDir(), "o")
			os.WriteFile(o, []byte(read(t, p)), 0o644)
			os.Remove(p)
			return os.Symlink(o, p)
		}, "was replaced by a symbolic link"},
		{"ledger same bytes, new inode", FileTurnLedger, func(p string) error {
			data := read(t, p)
			os.Remove(p)
			return os.WriteFile(p, []byte(data), 0o644)
		}, ""},
		{"ledger written through a hard link", FileTurnLedger, func(p string) error {
			alias := filepath.Join(filepath.Dir(p), "alias")
			if err := os.Link(p, alias); err != nil {
				return err
			}
			return os.WriteFile(alias, []byte("{}\n"), 0o644)
		}, "was rewritten"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, st := keptTask(t)
			path := s.Path(st.ID, c.file)
			before := read(t, path)
			if err := c.attack(path); err != nil {
				t.Fatal(err)
			}
			changes, err := s.CheckRecord(st)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				if len(changes) != 0 {
					t.Fatalf("changes %v, want none", changes)
				}
				if c.name == "notes appended" && read(t, path) != before+"my note\n" {
					t.Errorf("the agent's note was lost")
				}
				return
			}
			if len(changes) != 1 || changes[0].Name != c.file || !strings.Contains(changes[0].What, c.want) {
				t.Fatalf("changes %v, want %s %q", changes, c.file, c.want)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s not put back as a regular file: %v", c.file, err)
			}
			if strings.HasSuffix(c.name, "notes appended") {
				before += "my note\n" // the agent's notes after grub's last entry stay
			}
			if got := read(t, path); got != before {
				t.Errorf("%s put back as\n%q\nwant\n%q", c.file, got, before)
			}
			if changes, err := s.CheckRecord(st); err != nil || len(changes) != 0 {
				t.Errorf("a second check finds %v, %v", changes, err)
			}
		})
	}
}

// grub's appends after the agent's notes keep the notes in what grub
// keeps, and a crash between an append and its keep leaves a keep that the
// next append catches up with.
func TestKeepFollowsAppends(t *testing.T) {
	t.Parallel()
	s, st := keptTask(t)
	log := s.Path(st.ID, FileProgressLog)
	if err := appendRecord(log, "a note\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendProgress(st.ID, "## Turn 3\n"); err != nil {
		t.Fatal(err)
	}
	// A crash after this append, before its keep: the keep is behind.
	dir, k, err := s.loadKeep(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	behind := *k.Files[FileProgressLog]
	if err := appendRecord(log, "## Turn 4 appended by grub, not kept yet\n"); err != nil {
		t.Fatal(err)
	}
	allStamps.set(log, fileStamp{}) // a new process: nothing seen
	if err := s.AppendProgress(st.ID, "## Turn 5\n"); err != nil {
		t.Fatal(err)
	}
	_, k, _ = s.loadKeep(st.ID)
	if got := k.Files[FileProgressLog]; got.Size <= behind.Size {
		t.Fatalf("the keep did not grow: %+v", got)
	}
	if err := os.Truncate(log, behind.Size); err != nil {
		t.Fatal(err)
	}
	changes, err := s.CheckRecord(st)
	if err != nil || len(changes) != 1 {
		t.Fatalf("changes %v, %v", changes, err)
	}
	got := read(t, log)
	for _, want := range []string{"a note\n## Turn 3", "Turn 4 appended by grub", "## Turn 5\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the restored log lacks %q:\n%s", want, got)
		}
	}
	if cp := read(t, filepath.Join(dir, fileRecordLogCopy)); cp != got {
		t.Errorf("the copy differs from the restored log")
	}
}

// A damaged keep in the private folder is taken again from the files;
// nothing is blamed on a turn.
func TestDamagedKeepIsTakenAgain(t *testing.T) {
	t.Parallel()
	s, st := keptTask(t)
	dir, err := s.PrivateDir(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileRecordKeep), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.KeepRecord(st.ID); err != nil {
		t.Fatal(err)
	}
	if changes, err := s.CheckRecord(st); err != nil || len(changes) != 0 {
		t.Fatalf("changes %v, %v", changes, err)
	}
	if err := os.Truncate(s.Path(st.ID, FileTurnLedger), 3); err != nil {
		t.Fatal(err)
	}
	if changes, err := s.CheckRecord(st); err != nil || len(changes) != 1 {
		t.Fatalf("a truncated ledger after the keep was taken again: %v, %v", changes, err)
	}
}

func appendRecord(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Writing the record of a task that is not registered (a planted or
// cloned one that grub doctor, edit or steer writes to) keeps nothing and
// never registers it: having a private folder is what registers a task.
func TestKeepNeverRegisters(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	st := mustCreate(t, s, newState("keep the record"))
	other, err := Open(s.Root)
	if err != nil {
		t.Fatal(err)
	}
	other.Private = t.TempDir() // another user's, or a clone's: st is not registered there
	if other.Registered(st.ID) {
		t.Fatal("registered before anything was written")
	}
	if err := other.AppendProgress(st.ID, "## a note\n"); err != nil {
		t.Fatal(err)
	}
	if err := other.AppendTurn(st.ID, TurnRecord{Iteration: 1, Phase: PhaseExecution, Decision: "continue", Summary: "s",
		Status: StatusRunning, Time: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.RecordDiffers(st.ID); err != nil {
		t.Fatal(err)
	}
	if other.Registered(st.ID) {
		t.Error("writing the record registered the task")
	}
}
