package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEditFile(t *testing.T) {
	const orig = "package a\n\nfunc A() {\n\treturn\n}\n\nfunc B() {\n\treturn\n}\n"
	tests := []struct {
		name     string
		file     string // content before; orig if empty
		args     map[string]any
		isError  bool
		contains string
		after    string // content after; unchanged if empty
	}{
		{name: "unique match", args: map[string]any{"old_string": "func A() {", "new_string": "func A2() {"},
			contains: "replaced 1 occurrence in a.go (line 3)", after: strings.Replace(orig, "func A()", "func A2()", 1)},
		{name: "zero matches", args: map[string]any{"old_string": "func C()", "new_string": "func D()"},
			isError: true, contains: "old_string was not found in a.go"},
		{name: "two matches", args: map[string]any{"old_string": "\treturn\n", "new_string": "\treturn // done\n"},
			isError: true, contains: "old_string occurs 2 times in a.go (starting on lines 4, 8); add surrounding lines"},
		{name: "replace_all", args: map[string]any{"old_string": "\treturn\n", "new_string": "\treturn // done\n", "replace_all": true},
			contains: "replaced 2 occurrences in a.go (the first on line 4)", after: strings.ReplaceAll(orig, "\treturn\n", "\treturn // done\n")},
		{name: "replace_all with one match", args: map[string]any{"old_string": "package a", "new_string": "package b", "replace_all": true},
			contains: "replaced 1 occurrence", after: strings.Replace(orig, "package a", "package b", 1)},
		{name: "old equals new", args: map[string]any{"old_string": "func A()", "new_string": "func A()"},
			isError: true, contains: "are the same"},
		{name: "empty old_string", args: map[string]any{"old_string": "", "new_string": "x"},
			isError: true, contains: "old_string is empty"},
		{name: "line-number prefix hint", args: map[string]any{"old_string": "     3\tfunc A() {", "new_string": "x"},
			isError: true, contains: "line-number prefixes"},
		{name: "whitespace hint", args: map[string]any{"old_string": "func A() {\n    return", "new_string": "x"},
			isError: true, contains: "would match if spaces were ignored"},
		{name: "CRLF hint", file: "a\r\nb\r\n", args: map[string]any{"old_string": "a\nb", "new_string": "x"},
			isError: true, contains: "Windows line ends"},
		{name: "missing parameter", args: map[string]any{"old_string": "a"},
			isError: true, contains: `missing required parameter "new_string"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			before := tc.file
			if before == "" {
				before = orig
			}
			e.write("a.go", before)
			tc.args["path"] = "a.go"
			res := e.run("edit_file", tc.args)
			if res.IsError != tc.isError || !strings.Contains(res.Text, tc.contains) {
				t.Errorf("got IsError=%v %q, want IsError=%v containing %q", res.IsError, res.Text, tc.isError, tc.contains)
			}
			want := tc.after
			if want == "" {
				want = before
			}
			if got := e.read("a.go"); got != want {
				t.Errorf("file after:\n%q\nwant:\n%q", got, want)
			}
		})
	}
}

func TestEditFileKeepsModeAndRefusesMissing(t *testing.T) {
	e := newEnv(t, nil)
	e.write("run.sh", "echo old\n")
	if err := os.Chmod(filepath.Join(e.ws, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if res := e.run("edit_file", map[string]any{"path": "run.sh", "old_string": "old", "new_string": "new"}); res.IsError {
		t.Fatal(res.Text)
	}
	fi, err := os.Stat(filepath.Join(e.ws, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after edit = %v (%v), want 0755", fi.Mode(), err)
	}
	res := e.run("edit_file", map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"})
	if !res.IsError || !strings.Contains(res.Text, "does not exist") {
		t.Errorf("edit of a missing file: %+v", res)
	}
}

func TestWriteFile(t *testing.T) {
	e := newEnv(t, nil)
	res := e.run("write_file", map[string]any{"path": "deep/er/new.txt", "content": "héllo\n"})
	if res.IsError || res.Text != "wrote 7 bytes to deep/er/new.txt (new file)" {
		t.Errorf("new file: %+v", res)
	}
	if got := e.read("deep/er/new.txt"); got != "héllo\n" {
		t.Errorf("content = %q", got)
	}
	e.write("x.sh", "old")
	if err := os.Chmod(filepath.Join(e.ws, "x.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	res = e.run("write_file", map[string]any{"path": "x.sh", "content": ""})
	if res.IsError || res.Text != "wrote 0 bytes to x.sh (replaced its previous content)" {
		t.Errorf("replace: %+v", res)
	}
	if fi, err := os.Stat(filepath.Join(e.ws, "x.sh")); err != nil || fi.Mode().Perm() != 0o700 || fi.Size() != 0 {
		t.Errorf("replaced file: %v %v", fi, err)
	}
	res = e.run("write_file", map[string]any{"path": "deep", "content": "x"})
	if !res.IsError || !strings.Contains(res.Text, "is a folder") {
		t.Errorf("write over a folder: %+v", res)
	}
	e.write("file", "x")
	res = e.run("write_file", map[string]any{"path": "file/child.txt", "content": "x"})
	if !res.IsError || !strings.Contains(res.Text, "cannot") {
		t.Errorf("write under a file: %+v", res)
	}
	entries, err := os.ReadDir(filepath.Join(e.ws, "deep", "er"))
	if err != nil || len(entries) != 1 {
		t.Errorf("temp files left behind: %v %v", entries, err)
	}
}
