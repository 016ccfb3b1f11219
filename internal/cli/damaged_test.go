package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

// issue 11: one broken task does not hide the others.
func TestDamagedTaskDoesNotHideTheOthers(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	e.task("11112222", 2*time.Hour, nil)
	e.task("33334444", 0, nil) // the most recent, then corrupted
	e.task("55556666", 0, nil) // its state.json is then removed
	if err := os.WriteFile(e.store.Path("33334444", harness.FileState), []byte(`{"torn`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(e.store.Path("55556666", harness.FileState)); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := e.run("list")
	if code != 0 {
		t.Fatalf("list = %d, %s", code, stderr)
	}
	for _, want := range []string{"0a1b2c3d", "11112222"} {
		if !strings.Contains(out, want+"  ") {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "33334444  damaged") || !strings.Contains(out, "not valid JSON") ||
		!strings.Contains(out, "55556666  damaged") || !strings.Contains(out, "state.json is missing") {
		t.Errorf("list does not show the damaged tasks with their reasons:\n%s", out)
	}
	if !strings.Contains(stderr, "grub doctor 33334444") {
		t.Errorf("list does not point at grub doctor:\n%s", stderr)
	}

	code, out, stderr = e.run("list", "--json")
	if code != 0 {
		t.Fatalf("list --json = %d, %s", code, stderr)
	}
	if err := schemas.Validate(schemas.ListOutput, "stdout", []byte(out)); err != nil {
		t.Fatal(err)
	}
	var lo listOutput
	if err := json.Unmarshal([]byte(out), &lo); err != nil {
		t.Fatal(err)
	}
	if len(lo.Tasks) != 2 || len(lo.Damaged) != 2 || lo.Damaged[0].ID != "33334444" || lo.Damaged[1].ID != "55556666" ||
		lo.Damaged[1].Harness != ".grub/55556666" {
		t.Errorf("list --json = %+v", lo)
	}

	// A bare status shows the most recent healthy task, and says which are damaged.
	code, out, stderr = e.run("status")
	if code != 0 || !strings.Contains(out, "0a1b2c3d") || !strings.Contains(stderr, "task 33334444 is damaged") {
		t.Errorf("status = %d\n%s\n%s", code, out, stderr)
	}
	if code, _, _ := e.run("status", "--json"); code != 0 {
		t.Errorf("status --json = %d", code)
	}
	// The damaged one by id: exit 2, naming the file and the fix.
	code, _, stderr = e.run("status", "55556666")
	if code != ExitUsage || !strings.Contains(stderr, "grub doctor --repair 55556666") {
		t.Errorf("status 55556666 = %d, %s", code, stderr)
	}
}

// Only damaged tasks: a bare status says which is damaged (exit 2).
func TestOnlyDamagedTasks(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	os.WriteFile(e.store.Path("0a1b2c3d", harness.FileState), []byte(`{}`), 0o644)
	code, _, stderr := e.run("status")
	if code != ExitUsage || !strings.Contains(stderr, ".grub/0a1b2c3d/state.json") {
		t.Errorf("status = %d, %s", code, stderr)
	}
}

// issue 11: a state.json that is a folder, or a .grub that is a file, is
// bad input (exit 2) with a clear message, not an internal error.
func TestHarnessOfTheWrongKind(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	path := e.store.Path("0a1b2c3d", harness.FileState)
	os.Remove(path)
	os.Mkdir(path, 0o755)
	for _, args := range [][]string{{"status", "0a1b2c3d"}, {"pause", "0a1b2c3d"}} {
		code, _, stderr := e.run(args...)
		if code != ExitUsage || !strings.Contains(stderr, "state.json is a folder, not a regular file") {
			t.Errorf("%v = %d, %s", args, code, stderr)
		}
	}

	f := newTestEnv(t)
	if err := os.WriteFile(filepath.Join(f.root, ".grub"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"list"}, {"status", "0a1b2c3d"}, {"start", "--agent-cmd", "true", "do a thing"}} {
		code, _, stderr := f.run(args...)
		if code != ExitUsage || !strings.Contains(stderr, ".grub is a file, not a folder") {
			t.Errorf("%v = %d, %s", args, code, stderr)
		}
	}
}

// issue 11: grub edit with no terminal and no $EDITOR does not start vi;
// it is a usage error saying what to do, and nothing changes.
func TestEditWithoutTerminalOrEditor(t *testing.T) {
	e := newTestEnv(t)
	e.task("0a1b2c3d", time.Hour, nil)
	before := e.stateBytes("0a1b2c3d")
	code, _, stderr := e.run("edit") // e.run: no terminal, empty environment, the real editor
	if code != ExitUsage || !strings.Contains(stderr, "give it with --goal") || !strings.Contains(stderr, "$EDITOR") {
		t.Fatalf("edit = %d, %s", code, stderr)
	}
	if string(e.stateBytes("0a1b2c3d")) != string(before) {
		t.Error("the state changed")
	}
}
