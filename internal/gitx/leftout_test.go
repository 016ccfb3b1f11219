package gitx

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// sparse makes a file of size bytes that costs no disk space.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Anything the agent drops in a task folder (a 200 MB file, a folder,
// notes) stays out of the turn commit: only grub's own files are
// committed, as .grub/.gitignore says, and git itself reads the rules the
// same way.
func TestStrayHarnessFilesNeverCommitted(t *testing.T) {
	t.Parallel()
	run := gitBin(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	s, err := harness.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := &harness.State{Goal: "g", Status: harness.StatusRunning, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: "codex"}}
	if err := s.Create(st); err != nil {
		t.Fatal(err)
	}
	task := s.Rel(s.Dir(st.ID)) + "/"
	write(t, dir, map[string]string{
		task + harness.FileFeatureList: "{}\n",
		task + harness.FileTurnLedger:  "{}\n",
		task + "notes.txt":             "the agent's notes\n",
		task + "junk/inner.txt":        "x\n",
		task + "turns/0001.prompt.md":  "prompt\n",
		task + "spill/out.txt":         "spill\n",
		task + "lock":                  "{}\n",
		"main.go":                      "package main\n",
	})
	sparse(t, filepath.Join(dir, filepath.FromSlash(task+"big.bin")), 200<<20)

	r := mustOpen(t, dir)
	c, err := r.CommitTurn(context.Background(), Turn{TaskID: st.ID, Iteration: 1, Summary: "s", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LeftOut) != 0 {
		t.Errorf("LeftOut = %v: an ignored file is not even looked at", c.LeftOut)
	}
	var got []string
	for f := range commitFiles(t, dir, c.Hash) {
		got = append(got, f)
	}
	sort.Strings(got)
	want := []string{".grub/.gitattributes", ".grub/.gitignore"}
	for _, name := range harness.TrackedFiles() {
		want = append(want, task+name)
	}
	want = append(want, "main.go")
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("the turn commit holds\n%v\nwant\n%v", got, want)
	}

	// git agrees: nothing untracked or modified, the stray files ignored.
	status := run(dir, "status", "--porcelain", "--ignored", "--untracked-files=all")
	for _, line := range strings.Split(strings.TrimSpace(status), "\n") {
		if !strings.HasPrefix(line, "!! ") {
			t.Errorf("git status after the commit: %q; want only ignored files", line)
		}
	}
	for _, stray := range []string{"big.bin", "notes.txt", "junk/inner.txt", "lock"} {
		if !strings.Contains(status, "!! "+task+stray+"\n") {
			t.Errorf("git status does not show %s as ignored:\n%s", task+stray, status)
		}
	}
}

// A file over MaxFileSize anywhere in the tree is left out of the turn
// commit and reported; it stays in the work tree. A tracked file that
// grows over the cap keeps its committed version.
func TestLargeFilesLeftOut(t *testing.T) {
	t.Parallel()
	dir, r := committedRepo(t, map[string]string{"a.txt": "a\n", "data/grows.bin": "small\n"})
	sparse(t, filepath.Join(dir, "data", "big.bin"), 60<<20)
	sparse(t, filepath.Join(dir, "data", "grows.bin"), MaxFileSize+1)
	sparse(t, filepath.Join(dir, "data", "at-cap.bin"), MaxFileSize)
	write(t, dir, map[string]string{"b.txt": "b\n"})

	c, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	want := []LeftOut{{Path: "data/big.bin", Size: 60 << 20}, {Path: "data/grows.bin", Size: MaxFileSize + 1}}
	if !slices.Equal(c.LeftOut, want) {
		t.Errorf("LeftOut = %v, want %v", c.LeftOut, want)
	}
	files := headFiles(t, dir)
	if _, ok := files["data/big.bin"]; ok {
		t.Error("the 60 MiB file was committed")
	}
	if files["data/grows.bin"] != "small\n" || files["b.txt"] != "b\n" {
		t.Errorf("HEAD holds %v; want the tracked file's old version and the new small file", keys(files))
	}
	if _, ok := files["data/at-cap.bin"]; !ok {
		t.Error("a file of exactly MaxFileSize was left out")
	}
	if fi, err := os.Stat(filepath.Join(dir, "data", "big.bin")); err != nil || fi.Size() != 60<<20 {
		t.Errorf("the left-out file is gone from the work tree: %v, %v", fi, err)
	}
	dirty, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dirty, []string{"data/big.bin", "data/grows.bin"}) {
		t.Errorf("Dirty = %v: the left-out files are still uncommitted changes", dirty)
	}
}

// The agent's summary reaches the commit with its control characters
// escaped: on one line in the subject, newlines kept in the body.
func TestTurnMessageEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	msg := TurnMessage(Turn{TaskID: "ab12cd34", Iteration: 2, Feature: "f\x1b[1m", Summary: "ok \x1b]0;title\x07\x1b[2J done\nsecond \u009b line", Status: "running"})
	subject, body, _ := strings.Cut(msg, "\n")
	if want := `grub(ab12cd34) #2 f\x1b[1m: ok \x1b]0;title\x07\x1b[2J done`; subject != want {
		t.Errorf("subject %q, want %q", subject, want)
	}
	if !strings.Contains(body, "\nok \\x1b]0;title\\x07\\x1b[2J done\nsecond \\u009b line\n") {
		t.Errorf("body %q lacks the escaped summary with its newline", body)
	}
	for _, r := range msg {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f {
			t.Fatalf("the message holds the raw control character %q:\n%s", r, msg)
		}
	}
}
