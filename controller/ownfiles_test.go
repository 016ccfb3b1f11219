//go:build unix

package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// The repro: the agent replaces progress-log.md by a link to
// ~/.bashrc and ends with a summary holding a shell line. grub writes
// nothing outside the workspace, fails the turn for the link, and the log
// is back as a regular file with every earlier entry and the new one.
func TestSymlinkedProgressLogIsRestored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	bashrc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(bashrc, []byte("# my bashrc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newTask(t, nil)
	r.plannedInProcess()
	log := r.store.Path(r.id, harness.FileProgressLog)
	before, _ := os.ReadFile(log)
	st := r.runOneMore(r.then(func(agent.Turn) string {
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bashrc, log); err != nil {
			t.Fatal(err)
		}
		return `<loop-state>{"status":"continue","summary":"done\ntouch /tmp/PWNED #\n","nextStep":"go on"}</loop-state>`
	}))
	if data, _ := os.ReadFile(bashrc); string(data) != "# my bashrc\n" {
		t.Fatalf("grub wrote through the link: ~/.bashrc is now %q", data)
	}
	if st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, "progress-log.md is a symbolic link") {
		t.Errorf("failures %d, last error %q; want the turn failed for the link", st.ConsecutiveFailures, st.LastError)
	}
	fi, err := os.Lstat(log)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("progress-log.md after the turn: %v %v", fi, err)
	}
	after, _ := os.ReadFile(log)
	if !strings.HasPrefix(string(after), string(before)) || !strings.Contains(string(after[len(before):]), "touch /tmp/PWNED") {
		t.Errorf("log after the turn does not keep the earlier entries and add the turn's:\n%s", after)
	}
}

// turns/ replaced by a link to an outside folder: the next prompt is not
// written there, and the turn that made the link fails.
func TestSymlinkedTurnsFolder(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	r := newTask(t, nil)
	r.plannedInProcess()
	turns := r.store.Path(r.id, harness.DirTurns)
	st := r.runOneMore(r.then(func(agent.Turn) string {
		if err := os.RemoveAll(turns); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, turns); err != nil {
			t.Fatal(err)
		}
		return ""
	}))
	if st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, "turns was a symbolic link") {
		t.Errorf("failures %d, last error %q; want the turn failed for the link", st.ConsecutiveFailures, st.LastError)
	}
	// The agent links it again between runs: the next prompt still lands
	// in a real folder.
	if err := os.RemoveAll(turns); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, turns); err != nil {
		t.Fatal(err)
	}
	r.runOneMore(r.then(func(agent.Turn) string { return "" }))
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("grub wrote %s in the outside folder", entries[0].Name())
	}
	if fi, err := os.Lstat(turns); err != nil || !fi.IsDir() {
		t.Errorf("turns after the run: %v %v", fi, err)
	}
}
