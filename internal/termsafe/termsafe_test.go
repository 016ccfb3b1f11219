package termsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want, wantLine string
	}{
		{"empty", "", "", ""},
		{"plain", "fix the parser", "fix the parser", "fix the parser"},
		{"unicode kept", "café ✓ 日本語 \U0001F600", "café ✓ 日本語 \U0001F600", "café ✓ 日本語 \U0001F600"},
		{"backslash kept", `a\x1bb\n`, `a\x1bb\n`, `a\x1bb\n`},
		{"newline and tab", "a\n\tb", "a\n\tb", `a\n\tb`},
		{"carriage return", "done\rFAKE", `done\rFAKE`, `done\rFAKE`},
		{"title and clear", "\x1b]0;title\x07\x1b[2J", `\x1b]0;title\x07\x1b[2J`, `\x1b]0;title\x07\x1b[2J`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`, `a\x00b\x7f`},
		{"C1 CSI", "x\u009b31my", `x\u009b31my`, `x\u009b31my`},
		{"C1 bounds", "\u0080\u009f\u00a0", `\u0080\u009f` + "\u00a0", `\u0080\u009f` + "\u00a0"},
		{"invalid UTF-8", "ok\xffno\xc3", `ok\xffno\xc3`, `ok\xffno\xc3`},
		{"literal replacement char kept", "\ufffd", "\ufffd", "\ufffd"},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"isolate", "\u2066x\u2069", `\u2066x\u2069`, `\u2066x\u2069`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := Line(tt.in); got != tt.wantLine {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.wantLine)
			}
		})
	}
}

// printable reports whether s is valid UTF-8 made only of characters
// that Escape must leave alone (graphic characters, space, and, unless
// oneLine, newline and tab).
func printable(s string, oneLine bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r == '\n' || r == '\t') && !oneLine {
			continue
		}
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// checkSafe fails if out holds a byte or rune a terminal could act on.
func checkSafe(t *testing.T, fn, in, out string, oneLine bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not valid UTF-8", fn, in, out)
	}
	for _, r := range out {
		if (r == '\n' || r == '\t') && !oneLine {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || isBidi(r) {
			t.Fatalf("%s(%q) = %q: holds control %U", fn, in, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\nb\tc", "\x1b]0;title\x07\x1b[2J", "\u009b", "\xff\xfe", "\r\n", "\u202e", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		esc, line := Escape(in), Line(in)
		checkSafe(t, "Escape", in, esc, false)
		checkSafe(t, "Line", in, line, true)
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("Line(%q) = %q: not one line", in, line)
		}
		if printable(in, false) && esc != in {
			t.Fatalf("Escape(%q) = %q: changed printable text", in, esc)
		}
		if printable(in, true) && line != in {
			t.Fatalf("Line(%q) = %q: changed printable text", in, line)
		}
		// Escaping is idempotent: the output is itself printable.
		if Escape(esc) != esc || Line(line) != line {
			t.Fatalf("escaping %q twice changed it", in)
		}
	})
}
