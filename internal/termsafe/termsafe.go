package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that a terminal could act on
// replaced by a visible escape, and newline and tab kept as they are:
//
//   - C0 controls (U+0000–U+001F) other than \n and \t: \r becomes `\r`,
//     the others `\xNN` (ESC is `\x1b`);
//   - DEL (U+007F): `\x7f`;
//   - C1 controls (U+0080–U+009F), which some terminals read as the start
//     of an escape sequence: `\u009b`;
//   - Unicode bidirectional formatting characters (U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069), which can make text display in an
//     order other than the one it is read in: `\u202e`;
//   - each byte of invalid UTF-8: `\xNN`.
//
// Everything else, backslashes included, is returned unchanged.
func Escape(s string) string { return escape(s, false) }

// Line is like Escape but also escapes newline and tab (as `\n` and `\t`),
// so that the result is one line: for commit subjects, table cells and
// single-line messages.
func Line(s string) string { return escape(s, true) }

func escape(s string, oneLine bool) string {
	// Fast path: most text needs nothing.
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size, oneLine) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !mustEscape(r, size, oneLine) {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		switch {
		case r == utf8.RuneError && size <= 1:
			writeHexByte(&b, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			writeHexByte(&b, byte(r))
		default:
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		}
		i += size
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func writeHexByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// mustEscape reports whether the rune r, decoded from size bytes, is
// escaped. oneLine adds newline and tab.
func mustEscape(r rune, size int, oneLine bool) bool {
	switch {
	case r == utf8.RuneError && size <= 1:
		return true // invalid UTF-8 (a literal U+FFFD has size 3)
	case r == '\n' || r == '\t':
		return oneLine
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return isBidi(r)
}

// isBidi reports whether r is a bidirectional formatting character.
func isBidi(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
