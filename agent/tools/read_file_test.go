package tools

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// numbered returns n lines "line 1\n" … "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFileRanges(t *testing.T) {
	// A large inline limit, so that only the line cap applies.
	e := newEnv(t, func(c *Config) { c.InlineLimit = 1 << 20 })
	e.write("big.txt", numbered(2500))
	e.write("short.txt", "alpha\nbeta\ngamma") // no final newline
	e.write("empty.txt", "")
	e.write("long.txt", strings.Repeat("é", MaxLineChars+10)+"\nnext\n")
	e.write("bin.dat", "abc\x00def\n")
	e.write("dir/x.txt", "x\n")

	tests := []struct {
		name      string
		args      map[string]any
		isError   bool
		first     int // first numbered line expected, 0 for none
		last      int // last numbered line expected
		footer    string
		contains  []string
		notExists []string
	}{
		{name: "default reads the 2000-line cap", args: map[string]any{"path": "big.txt"},
			first: 1, last: MaxReadLines, footer: "(lines 1-2000 of 2500 in big.txt; use offset=2001 to read more)"},
		{name: "a limit over the cap is capped", args: map[string]any{"path": "big.txt", "limit": 5000},
			first: 1, last: MaxReadLines, footer: "use offset=2001"},
		{name: "the rest from an offset", args: map[string]any{"path": "big.txt", "offset": 2001},
			first: 2001, last: 2500, footer: "(lines 2001-2500 of 2500 in big.txt; end of file)"},
		{name: "a range", args: map[string]any{"path": "big.txt", "offset": 10, "limit": 5},
			first: 10, last: 14, footer: "(lines 10-14 of 2500 in big.txt; use offset=15 to read more)",
			contains: []string{"    10\tline 10\n", "    14\tline 14\n"}, notExists: []string{"line 9\n", "line 15\n"}},
		{name: "last line without newline", args: map[string]any{"path": "short.txt"},
			first: 1, last: 3, footer: "(lines 1-3 of 3 in short.txt; end of file)", contains: []string{"     3\tgamma\n"}},
		{name: "empty file", args: map[string]any{"path": "empty.txt"}, contains: []string{"empty.txt is empty (0 lines)"}},
		{name: "long line cut", args: map[string]any{"path": "long.txt"}, first: 1, last: 2,
			contains: []string{"line cut at 2000 characters; it is 4020 bytes long", "     2\tnext\n"}},
		{name: "offset past the end", args: map[string]any{"path": "short.txt", "offset": 4}, isError: true,
			contains: []string{"offset 4 is past the end of short.txt, which has 3 lines"}},
		{name: "negative limit", args: map[string]any{"path": "short.txt", "limit": -1}, isError: true, contains: []string{"must not be negative"}},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, isError: true, contains: []string{"binary"}},
		{name: "folder", args: map[string]any{"path": "dir"}, isError: true, contains: []string{"is a folder"}},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, isError: true, contains: []string{"nope.txt does not exist"}},
		{name: "wrong type", args: map[string]any{"path": "short.txt", "offset": "3"}, isError: true, contains: []string{`parameter "offset" must be a JSON integer`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := e.run("read_file", tc.args)
			if res.IsError != tc.isError {
				t.Fatalf("IsError = %v, want %v; text %q", res.IsError, tc.isError, res.Text)
			}
			if tc.first > 0 {
				lines := strings.Split(res.Text, "\n")
				numberedLines := lines[:len(lines)-1]
				if got := len(numberedLines); got != tc.last-tc.first+1 {
					t.Errorf("got %d numbered lines, want %d", got, tc.last-tc.first+1)
				}
				for i, l := range numberedLines {
					if want := fmt.Sprintf("%6d\t", tc.first+i); !strings.HasPrefix(l, want) {
						t.Fatalf("line %d = %q, want prefix %q", i, l, want)
					}
				}
				if tc.footer != "" && !strings.Contains(lines[len(lines)-1], tc.footer) {
					t.Errorf("footer = %q, want %q", lines[len(lines)-1], tc.footer)
				}
			}
			for _, s := range tc.contains {
				if !strings.Contains(res.Text, s) {
					t.Errorf("text lacks %q:\n%s", s, res.Text)
				}
			}
			for _, s := range tc.notExists {
				if strings.Contains(res.Text, s) {
					t.Errorf("text has %q:\n%s", s, res.Text)
				}
			}
			if !utf8.ValidString(res.Text) {
				t.Errorf("text is not valid UTF-8")
			}
		})
	}
}

// With the default inline limit a long read stops at the limit, says where
// to go on, and is never spilled.
func TestReadFileStopsAtInlineLimit(t *testing.T) {
	e := newEnv(t, nil)
	e.write("big.txt", numbered(2500))
	res := e.run("read_file", map[string]any{"path": "big.txt"})
	if res.IsError || res.SpillPath != "" {
		t.Fatalf("IsError=%v SpillPath=%q, want a plain result", res.IsError, res.SpillPath)
	}
	if len(res.Text) > e.cfg.InlineLimit {
		t.Errorf("text is %d bytes, over the inline limit %d", len(res.Text), e.cfg.InlineLimit)
	}
	lines := strings.Split(res.Text, "\n")
	n := len(lines) - 1
	want := fmt.Sprintf("(lines 1-%d of 2500 in big.txt; the output limit of %d bytes was reached; use offset=%d to read more)", n, e.cfg.InlineLimit, n+1)
	if lines[n] != want {
		t.Errorf("footer = %q, want %q", lines[n], want)
	}
	next := e.run("read_file", map[string]any{"path": "big.txt", "offset": n + 1, "limit": 1})
	if !strings.HasPrefix(next.Text, fmt.Sprintf("%6d\tline %d\n", n+1, n+1)) {
		t.Errorf("reading on from the footer's offset: %q", next.Text)
	}
}
