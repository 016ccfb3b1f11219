package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every JSON document grub reads from outside (the feature list, state,
// control requests, ledger lines, the agent's decision) is read strictly,
// here, so that no other reader of the same bytes sees something grub did
// not: encoding/json alone lets through a value followed by more bytes
// (its Decoder's More is false before a stray ']' or '}'), keys given
// twice (the last counts; Python's json and jq agree, a first-wins reader
// does not), keys that differ only in case (a Go struct takes "PASSES"
// for "passes", the schema sees an unknown key) and invalid UTF-8 (read
// as U+FFFD). DecodeJSON refuses all of them, and \u escapes that name
// half a surrogate pair (Go reads U+FFFD, Python a lone surrogate).
// Unknown keys are the schema's business (additionalProperties) or, for
// a document decoded into a Go struct, DecodeInto's.

// DecodeJSON decodes data as exactly one JSON value, with white space
// around it allowed and nothing else, as encoding/json with UseNumber
// decodes it, and refuses what other readers could read differently (see
// above). file names the document in errors, which are *Error with no
// Schema.
func DecodeJSON(file string, data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, &Error{File: file, Syntax: fmt.Errorf("invalid UTF-8 at byte %d; JSON text is UTF-8", invalidUTF8At(data))}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{File: file, Syntax: err}
	}
	end := int(dec.InputOffset())
	if !OnlySpace(data[end:]) {
		return nil, &Error{File: file, Syntax: fmt.Errorf("trailing data after the JSON value (at byte %d); the file must hold one value and nothing after it", end+firstNonSpace(data[end:]))}
	}
	s := keyScan{data: data[:end]}
	if v := s.value(); v != nil {
		return nil, &Error{File: file, Violations: []Violation{*v}}
	}
	return doc, nil
}

// OnlySpace reports whether b is only JSON white space (space, tab,
// carriage return, line feed): the one place that decides "nothing after
// the value".
func OnlySpace(b []byte) bool { return firstNonSpace(b) == len(b) }

func firstNonSpace(b []byte) int {
	for i, c := range b {
		if !jsonSpace[c] {
			return i
		}
	}
	return len(b)
}

var jsonSpace = [256]bool{' ': true, '\t': true, '\r': true, '\n': true}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// keyScan walks one JSON value that encoding/json has decoded (so it is
// well formed) and checks every object's keys and every string's \u
// escapes.
type keyScan struct {
	data []byte
	i    int
	path []token // the way to the value being read
	// keys holds the keys of the objects being read, outermost first:
	// each object's from where it started (one slice for all, so that
	// an object's keys cost no allocation).
	keys [][]byte
}

// token is one step of a JSON pointer: an object's key, or an array's
// index when key is nil.
type token struct {
	key   []byte
	index int
}

// smallObject is how many keys an object may have before its keys are
// compared through a map of their folded forms rather than one by one.
const smallObject = 16

func (s *keyScan) space() { s.i += firstNonSpace(s.data[s.i:]) }

func (s *keyScan) value() *Violation {
	s.space()
	switch s.data[s.i] {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, v := s.str()
		return v
	}
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return nil
		}
		s.i++
	}
	return nil
}

func (s *keyScan) array() *Violation {
	s.i++ // '['
	s.space()
	if s.data[s.i] == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.path = append(s.path, token{index: n})
		if v := s.value(); v != nil {
			return v
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		s.i++ // ',' or ']'
		if s.data[s.i-1] == ']' {
			return nil
		}
	}
}

func (s *keyScan) object() *Violation {
	s.i++ // '{'
	s.space()
	if s.data[s.i] == '}' {
		s.i++
		return nil
	}
	from := len(s.keys)
	defer func() { s.keys = s.keys[:from] }()
	var folded map[string][]byte // once the object is not small
	for {
		s.space()
		key, v := s.str()
		if v != nil {
			return v
		}
		s.path = append(s.path, token{key: key})
		if v := s.sameKey(key, from, &folded); v != nil {
			return v
		}
		s.space()
		s.i++ // ':'
		if v := s.value(); v != nil {
			return v
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		s.i++ // ',' or '}'
		if s.data[s.i-1] == '}' {
			return nil
		}
	}
}

// sameKey refuses key when the object already has it, or a key that
// differs from it only in case as encoding/json compares names
// (bytes.EqualFold: "ſ" is an "s" and "K" a "k" too).
func (s *keyScan) sameKey(key []byte, from int, folded *map[string][]byte) *Violation {
	var other []byte
	found := false
	if *folded == nil {
		keys := s.keys[from:]
		for _, k := range keys {
			if bytes.EqualFold(k, key) {
				other, found = k, true
				break
			}
		}
		s.keys = append(s.keys, key)
		if len(keys)+1 > smallObject {
			*folded = make(map[string][]byte, 2*smallObject)
			for _, k := range s.keys[from:] {
				(*folded)[foldName(k)] = k
			}
		}
	} else {
		f := foldName(key)
		other, found = (*folded)[f]
		(*folded)[f] = key
	}
	switch {
	case !found:
		return nil
	case bytes.Equal(other, key):
		return &Violation{Pointer: pointer(s.path), Rule: fmt.Sprintf("key %s appears twice in one object; readers disagree on which one counts: keep one", strconv.Quote(string(key)))}
	}
	return &Violation{Pointer: pointer(s.path), Rule: fmt.Sprintf("key %s and key %s differ only in case; keys are case-sensitive and readers disagree on which one counts: keep the one the format names",
		strconv.Quote(string(other)), strconv.Quote(string(key)))}
}

// foldName is encoding/json's folded form of a name: equal for two names
// exactly when bytes.EqualFold says they are.
func foldName(b []byte) string {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return string(out)
}

// str reads the string at s.i and returns its content: the bytes
// themselves when it has no escapes.
func (s *keyScan) str() ([]byte, *Violation) {
	start := s.i + 1
	rest := s.data[start:]
	end := bytes.IndexByte(rest, '"')
	if bytes.IndexByte(rest[:end], '\\') < 0 {
		s.i = start + end + 1
		return rest[:end], nil
	}
	i := start
	for s.data[i] != '"' {
		if s.data[i] != '\\' {
			i++
			continue
		}
		if s.data[i+1] != 'u' {
			i += 2
			continue
		}
		n, ok := s.escape(i)
		if !ok {
			raw := string(s.data[i : i+6])
			return nil, &Violation{Pointer: pointer(s.path), Rule: fmt.Sprintf("the escape %s is half of a UTF-16 surrogate pair without its other half, which is not a character: write the character itself", raw)}
		}
		i += n
	}
	s.i = i + 1
	var text string
	_ = json.Unmarshal(s.data[start-1:i+1], &text) // well formed: encoding/json decoded it
	return []byte(text), nil
}

// escape checks the \u escape at i: a surrogate must come in a pair. It
// returns how many bytes the escape (or the pair) takes.
func (s *keyScan) escape(i int) (int, bool) {
	r := hex4(s.data[i+2 : i+6])
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, false
	case r >= 0xD800 && r <= 0xDBFF:
		next := s.data[i+6:]
		if len(next) >= 6 && next[0] == '\\' && next[1] == 'u' {
			if lo := hex4(next[2:6]); lo >= 0xDC00 && lo <= 0xDFFF {
				return 12, true
			}
		}
		return 0, false
	}
	return 6, true
}

func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// pointer is the JSON pointer (RFC 6901) made of tokens.
func pointer(tokens []token) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		if t.key == nil {
			b.WriteString(strconv.Itoa(t.index))
			continue
		}
		b.WriteString(escapeToken(string(t.key)))
	}
	return b.String()
}

// escapeToken is a key as a JSON pointer token.
func escapeToken(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
