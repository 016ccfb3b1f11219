package tools

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A 5 MB command output is spilled whole; the model gets a preview under
// the inline limit naming the file, and can read the file back.
func TestShellSpillsLargeOutput(t *testing.T) {
	const size = 5 << 20
	e := newEnv(t, nil)
	res := e.run("shell", map[string]any{"command": fmt.Sprintf("yes abcdefghij | head -c %d", size)})
	if res.IsError {
		t.Fatalf("IsError: %q", res.Text)
	}
	if len(res.Text) > e.cfg.InlineLimit {
		t.Errorf("preview is %d bytes, over the inline limit %d", len(res.Text), e.cfg.InlineLimit)
	}
	wantPath := ".grub/" + testTaskID + "/spill/shell-1.txt"
	if res.SpillPath != wantPath {
		t.Errorf("SpillPath = %q, want %q", res.SpillPath, wantPath)
	}
	full := e.read(res.SpillPath)
	stdout := bytes.Repeat([]byte("abcdefghij\n"), size/11+1)[:size]
	if want := "exit code 0\n--- stdout ---\n" + string(stdout); full != want {
		t.Errorf("spill file is %d bytes, want %d: the full output", len(full), len(want))
	}
	for _, s := range []string{
		fmt.Sprintf("This output is %d bytes", len(full)),
		wantPath,
		"exit code 0\n--- stdout ---\nabcdefghij\n",
		"bytes not shown; the tail below starts on line",
	} {
		if !strings.Contains(res.Text, s) {
			t.Errorf("preview lacks %q", s)
		}
	}
	// The tail of the preview is the tail of the file.
	if _, tail, _ := strings.Cut(res.Text, " ...]\n"); !strings.HasSuffix(full, tail) || len(tail) < 1000 {
		t.Errorf("preview tail (%d bytes) is not the end of the spill file", len(tail))
	}
	// read_file reads the spill file back by the path given.
	back := e.run("read_file", map[string]any{"path": res.SpillPath, "offset": 3, "limit": 1})
	if back.IsError || !strings.HasPrefix(back.Text, "     3\tabcdefghij\n") {
		t.Errorf("read_file of the spill file: %+v", back)
	}
	// A second spill gets a file of its own.
	again := e.run("shell", map[string]any{"command": "head -c 20000 /dev/zero | tr '\\0' x"})
	if again.SpillPath == "" || again.SpillPath == res.SpillPath {
		t.Errorf("second spill path %q, want a new file", again.SpillPath)
	}
}

// Spill files are never overwritten, even ones left by an earlier process.
func TestSpillNeverOverwrites(t *testing.T) {
	e := newEnv(t, nil)
	e.write(".grub/"+testTaskID+"/spill/grep-1.txt", "earlier\n")
	sp := newSpiller("grep", e.cfg.withDefaults(), newWorkspace(e.cfg))
	res, err := sp.result(strings.Repeat("x\n", e.cfg.InlineLimit), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.SpillPath != ".grub/"+testTaskID+"/spill/grep-2.txt" {
		t.Errorf("SpillPath = %q, want grep-2.txt", res.SpillPath)
	}
	if got := e.read(".grub/" + testTaskID + "/spill/grep-1.txt"); got != "earlier\n" {
		t.Errorf("grep-1.txt overwritten: %q", got)
	}
}

// A spill folder outside the workspace is named by its absolute path, and
// read_file may read it there.
func TestSpillOutsideWorkspace(t *testing.T) {
	var spillDir string
	e := newEnv(t, func(c *Config) {
		spillDir = filepath.Join(filepath.Dir(c.Workspace), "spill")
		c.SpillDir = spillDir
	})
	res := e.run("shell", map[string]any{"command": "seq 1 10000"})
	if !strings.HasPrefix(res.SpillPath, spillDir+string(filepath.Separator)) {
		t.Fatalf("SpillPath = %q, want a file in %s", res.SpillPath, spillDir)
	}
	back := e.run("read_file", map[string]any{"path": res.SpillPath, "offset": 4, "limit": 1})
	if back.IsError || !strings.HasPrefix(back.Text, "     4\t2\n") {
		t.Errorf("read_file of the outside spill file: %+v", back)
	}
	if w := e.run("write_file", map[string]any{"path": res.SpillPath, "content": "x"}); !w.IsError {
		t.Errorf("write_file into the outside spill folder was allowed: %q", w.Text)
	}
}

func TestPreview(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		limit int
	}{
		{"lines", numbered(10000), 4096},
		{"one huge line", strings.Repeat("a", 100000), 2048},
		{"multi-byte runes without line ends", strings.Repeat("日本語", 50000), 1024},
		{"just over the limit", numbered(2000)[:5000], 4999},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := preview(tc.text, "spill/x-1.txt", tc.limit)
			if len(p) > tc.limit {
				t.Errorf("preview is %d bytes, over %d", len(p), tc.limit)
			}
			if !utf8.ValidString(p) {
				t.Errorf("preview is not valid UTF-8")
			}
			if !strings.HasPrefix(p, fmt.Sprintf("[This output is %d bytes", len(tc.text))) || !strings.Contains(p, "spill/x-1.txt") {
				t.Errorf("preview lacks the size or path: %.200q", p)
			}
			header, rest, _ := strings.Cut(p, "Its head and tail follow.]\n")
			head, tail, ok := strings.Cut(rest, "\n[... ")
			if !ok || header == "" {
				t.Fatalf("no marker in %.300q", p)
			}
			_, tail, _ = strings.Cut(tail, " ...]\n")
			if !strings.HasPrefix(tc.text, head) || !strings.HasSuffix(tc.text, tail) {
				t.Errorf("head or tail is not a part of the text")
			}
			if len(head) < tc.limit/8 || len(tail) < tc.limit/8 {
				t.Errorf("head %d and tail %d bytes: too little of the limit %d used", len(head), len(tail), tc.limit)
			}
			omitted := len(tc.text) - len(head) - len(tail)
			tailLine := 1 + strings.Count(tc.text[:len(tc.text)-len(tail)], "\n")
			if want := fmt.Sprintf("[... %d bytes not shown; the tail below starts on line %d ...]", omitted, tailLine); !strings.Contains(p, want) {
				t.Errorf("marker wrong, want %q", want)
			}
		})
	}
}

// A result within the limit is returned as is and writes nothing.
func TestNoSpillWithinLimit(t *testing.T) {
	e := newEnv(t, nil)
	res := e.run("shell", map[string]any{"command": "seq 1 100"})
	if res.SpillPath != "" || !strings.HasSuffix(res.Text, "\n100") {
		t.Errorf("got %+v", res)
	}
	if _, err := os.Stat(e.cfg.SpillDir); !os.IsNotExist(err) {
		t.Errorf("spill folder created for a small result (%v)", err)
	}
}

// A spill folder the agent replaced by a link (to the outside, or to /)
// before a large result is replaced by a real folder: grub never writes
// through it.
func TestSpillFolderLinkReplaced(t *testing.T) {
	task := ".grub/" + testTaskID
	for _, tc := range []struct {
		name  string
		plant func(e *env)
	}{
		{"spill folder linked outside", func(e *env) { e.symlink(e.outside, task+"/spill") }},
		{"spill folder linked to /", func(e *env) { e.symlink("/", task+"/spill") }},
		{"task folder linked outside", func(e *env) {
			if err := os.RemoveAll(filepath.Join(e.ws, task)); err != nil {
				t.Fatal(err)
			}
			e.symlink(e.outside, task)
		}},
		{"spill file linked outside", func(e *env) {
			e.write(task+"/spill/keep.txt", "x\n")
			e.symlink(filepath.Join(e.outside, "planted.txt"), task+"/spill/shell-1.txt")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			tc.plant(e)
			before := listAll(t, e.outside)
			res := e.run("shell", map[string]any{"command": "seq 1 10000"})
			if res.IsError || res.SpillPath == "" {
				t.Fatalf("got %+v, want a spilled result", res)
			}
			if after := listAll(t, e.outside); after != before {
				t.Errorf("the outside folder changed:\nbefore %s\nafter  %s", before, after)
			}
			spill := filepath.Join(e.ws, task, "spill")
			if fi, err := os.Lstat(spill); err != nil || !fi.IsDir() {
				t.Errorf("spill folder is not a real folder: %v %v", fi, err)
			}
			full := filepath.Join(e.ws, filepath.FromSlash(res.SpillPath))
			if fi, err := os.Lstat(full); err != nil || !fi.Mode().IsRegular() || filepath.Dir(full) != spill {
				t.Errorf("spill file %s is not a regular file in %s: %v %v", res.SpillPath, spill, fi, err)
			}
			if !strings.HasSuffix(e.read(res.SpillPath), "\n10000") {
				t.Errorf("spill file does not hold the output")
			}
		})
	}
}

// listAll describes every entry under dir, for spotting a change.
func listAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d; ", p, info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Past the turn's spill cap a large result is not written: the model gets
// its head and tail and a note saying the rest is lost. The budget is
// shared by the tools of one All.
func TestSpillCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.SpillCap = 1 << 20 })
	sp := e.tools["grep"].(*GrepTool).sp
	first, err := sp.result(numbered(30000), false) // about 300 KB
	if err != nil || first.SpillPath == "" {
		t.Fatalf("first result: %+v %v, want it spilled", first, err)
	}
	other := e.tools["list_files"].(*ListFilesTool).sp
	if _, err := other.result(numbered(30000), false); err != nil {
		t.Fatal(err)
	}
	text := numbered(90000) // about 980 KB: over what is left, within a whole budget
	res, err := sp.result(text, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.SpillPath != "" || len(res.Text) > e.cfg.InlineLimit {
		t.Errorf("over the cap: SpillPath %q, %d bytes; want no file and a preview", res.SpillPath, len(res.Text))
	}
	for _, want := range []string{"It was not saved to a file: this turn's spill files reached their cap of 1 MiB",
		"bytes not shown", "line 1\n"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("preview lacks %q:\n%.600s", want, res.Text)
		}
	}
	if !strings.HasSuffix(text, res.Text[len(res.Text)-1000:]) {
		t.Errorf("the preview does not end with the text's tail")
	}
	entries, _ := os.ReadDir(e.cfg.SpillDir)
	if len(entries) != 2 {
		t.Errorf("%d spill files, want 2 (the third was over the cap)", len(entries))
	}
	// A new turn (a new All) starts with the whole budget.
	fresh, err := All(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := fresh[6].(*GrepTool).sp.result(text, false); err != nil || res.SpillPath == "" {
		t.Errorf("next turn: %+v %v, want the result spilled", res, err)
	}
}
