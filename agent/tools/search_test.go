package tools

import (
	"fmt"
	"strings"
	"testing"
)

// searchTree writes the workspace the grep, glob and list_files tests
// share.
func searchTree(e *env) {
	e.write("main.go", "package main\n\nfunc main() {\n\tTODO()\n}\n")
	e.write("main_test.go", "package main\n// TODO test\n")
	e.write("README.md", "# todo list\nTODO: docs\n")
	e.write("internal/a/a.go", "package a\n// TODO a\n")
	e.write("internal/a/b/b.go", "package b\n// TODO b\n")
	e.write("internal/a/b/notes.txt", "TODO notes\n")
	e.write("bin/tool", "TODO\x00binary\n")
	e.write(".git/config", "TODO in git\n")
	e.write(".grub/"+testTaskID+"/state.json", "TODO in state\n")
	e.write(".grub/"+testTaskID+"/progress-log.md", "TODO in the log\n")
	e.write(".grub/"+testTaskID+"/turns/0001.jsonl", "TODO in a transcript\n")
	e.write(".grub/"+testTaskID+"/spill/shell-1.txt", "TODO in a spill\n")
}

func TestGrep(t *testing.T) {
	e := newEnv(t, nil)
	searchTree(e)
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string // the whole text
	}{
		{name: "everything searchable", args: map[string]any{"pattern": "TODO"}, want: strings.Join([]string{
			".grub/" + testTaskID + "/progress-log.md:1: TODO in the log",
			"README.md:2: TODO: docs",
			"internal/a/a.go:2: // TODO a",
			"internal/a/b/b.go:2: // TODO b",
			"internal/a/b/notes.txt:1: TODO notes",
			"main.go:4: \tTODO()",
			"main_test.go:2: // TODO test",
		}, "\n")},
		{name: "include by name", args: map[string]any{"pattern": "TODO", "include": "*_test.go"},
			want: "main_test.go:2: // TODO test"},
		{name: "include by path", args: map[string]any{"pattern": "TODO", "include": "internal/**/*.go"},
			want: "internal/a/a.go:2: // TODO a\ninternal/a/b/b.go:2: // TODO b"},
		{name: "in a folder", args: map[string]any{"pattern": "TODO", "path": "internal/a/b"},
			want: "internal/a/b/b.go:2: // TODO b\ninternal/a/b/notes.txt:1: TODO notes"},
		{name: "in a file", args: map[string]any{"pattern": "^package", "path": "main.go"},
			want: "main.go:1: package main"},
		{name: "ignore case", args: map[string]any{"pattern": "todo list|todo:", "ignore_case": true, "include": "*.md"},
			want: "README.md:1: # todo list\nREADME.md:2: TODO: docs"},
		{name: "case sensitive", args: map[string]any{"pattern": "todo", "include": "*.md"}, want: "README.md:1: # todo list"},
		{name: "no match", args: map[string]any{"pattern": "nowhere", "include": "*.go"},
			want: `no matches for "nowhere" in . (files matching "*.go")`},
		{name: "invalid regexp", args: map[string]any{"pattern": "TODO("}, isError: true},
		{name: "look-around is not RE2", args: map[string]any{"pattern": "(?=x)"}, isError: true},
		{name: "malformed include", args: map[string]any{"pattern": "x", "include": "[a"}, isError: true},
		{name: "include leaving the folder", args: map[string]any{"pattern": "x", "include": "../*.go"}, isError: true},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run("grep", tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v: %q", res.IsError, tc.isError, res.Text)
			}
			if tc.want != "" && res.Text != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", res.Text, tc.want)
			}
		})
	}
}

func TestGrepCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxGrepMatches = 5 })
	e.write("many.txt", strings.Repeat("hit\n", 12)+strings.Repeat("x", 3000)+"hit\n")
	res := e.run("grep", map[string]any{"pattern": "hit"})
	lines := strings.Split(res.Text, "\n")
	if len(lines) != 6 || lines[0] != "many.txt:1: hit" || lines[4] != "many.txt:5: hit" {
		t.Fatalf("got:\n%s", res.Text)
	}
	if want := "[8 more matches not shown; narrow the pattern, path or include]"; lines[5] != want {
		t.Errorf("last line %q, want %q", lines[5], want)
	}
	if !strings.Contains(e.tools["grep"].Description(), "At most 5 matches are shown") {
		t.Errorf("the description does not quote the configured cap")
	}
	long := e.run("grep", map[string]any{"pattern": "xhit"})
	if !strings.Contains(long.Text, fmt.Sprintf("line cut at %d characters; it is 3003 bytes long", MaxGrepLineChars)) {
		t.Errorf("long line not cut: %.200q", long.Text)
	}
}

func TestGlob(t *testing.T) {
	e := newEnv(t, nil)
	searchTree(e)
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string
	}{
		{name: "** at any depth", args: map[string]any{"pattern": "**/*.go"},
			want: "internal/a/a.go\ninternal/a/b/b.go\nmain.go\nmain_test.go"},
		{name: "one level", args: map[string]any{"pattern": "*.go"}, want: "main.go\nmain_test.go"},
		{name: "** in the middle", args: map[string]any{"pattern": "internal/**/b.go"}, want: "internal/a/b/b.go"},
		{name: "** matching no folder", args: map[string]any{"pattern": "internal/**/a/a.go"}, want: "internal/a/a.go"},
		{name: "folders marked", args: map[string]any{"pattern": "internal/*"}, want: "internal/a/"},
		{name: "under a path", args: map[string]any{"pattern": "**/*.txt", "path": "internal"},
			want: "paths relative to internal:\na/b/notes.txt"},
		{name: ".git and transcripts not entered", args: map[string]any{"pattern": "**/config"}, want: `no path under . matches "**/config"`},
		{name: "harness files listed", args: map[string]any{"pattern": ".grub/*/*.json"}, want: ".grub/" + testTaskID + "/state.json"},
		{name: "malformed", args: map[string]any{"pattern": "[a"}, isError: true},
		{name: "absolute", args: map[string]any{"pattern": "/etc/*"}, isError: true},
		{name: "dot-dot", args: map[string]any{"pattern": "../*"}, isError: true},
		{name: "a file as path", args: map[string]any{"pattern": "*", "path": "main.go"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run("glob", tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v: %q", res.IsError, tc.isError, res.Text)
			}
			if tc.want != "" && res.Text != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", res.Text, tc.want)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.InlineLimit = 1 << 20 })
	for i := range MaxGlobResults + 7 {
		e.write(fmt.Sprintf("d/f%04d.txt", i), "")
	}
	res := e.run("glob", map[string]any{"pattern": "d/*.txt"})
	lines := strings.Split(res.Text, "\n")
	if len(lines) != MaxGlobResults+1 || lines[0] != "d/f0000.txt" {
		t.Fatalf("got %d lines starting %q", len(lines), lines[0])
	}
	if want := "[7 more matches not shown; narrow the pattern or the path]"; lines[MaxGlobResults] != want {
		t.Errorf("last line %q, want %q", lines[MaxGlobResults], want)
	}
}

func TestListFiles(t *testing.T) {
	e := newEnv(t, nil)
	searchTree(e)
	e.symlink("internal", "ilink")
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string
	}{
		{name: "root, depth 1", args: map[string]any{},
			want: "./ (depth 1):\n.git/\n.grub/\nREADME.md\nbin/\nilink -> internal\ninternal/\nmain.go\nmain_test.go"},
		{name: "depth 2", args: map[string]any{"path": "internal", "depth": 2},
			want: "internal/ (depth 2):\na/\na/a.go\na/b/"},
		{name: "deep", args: map[string]any{"path": "internal", "depth": 5},
			want: "internal/ (depth 5):\na/\na/a.go\na/b/\na/b/b.go\na/b/notes.txt"},
		{name: "transcripts shown, not entered", args: map[string]any{"path": ".grub", "depth": 3},
			want: ".grub/ (depth 3):\n" + testTaskID + "/\n" + testTaskID + "/progress-log.md\n" + testTaskID + "/spill/\n" + testTaskID + "/state.json\n" + testTaskID + "/turns/"},
		{name: "depth too large", args: map[string]any{"depth": MaxListDepth + 1}, isError: true},
		{name: "a file", args: map[string]any{"path": "main.go"}, isError: true},
		{name: "missing", args: map[string]any{"path": "nope"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run("list_files", tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v: %q", res.IsError, tc.isError, res.Text)
			}
			if tc.want != "" && res.Text != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", res.Text, tc.want)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"**", "x/y", true},
		{"x/**", "x", true},
		{"x/**/z", "x/z", true},
		{"x/**/z", "x/a/b/z", true},
		{"x/**/z", "x/a/b/zz", false},
		{"*.go", "x/a.go", false},
		{"x/*/z", "x/a/b/z", false},
		{"[ab].txt", "b.txt", true},
	}
	for _, tc := range tests {
		g, err := parseGlob("pattern", tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.match(strings.Split(tc.path, "/")); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}
