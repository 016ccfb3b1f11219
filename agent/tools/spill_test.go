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
