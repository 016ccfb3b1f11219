package featurelist

import (
	"bytes"
	"encoding/json"

	"github.com/grub-dev/grub/schemas"
)

// A turn changes one feature of a list of maybe 2,000, and parsing the
// whole file was most of what refereeing it cost. The harness holds the
// accepted list's bytes (Marshal's for the list before the turn), so
// CheckTurnBytes is handed them with the new bytes, and nothing is
// remembered here: when the new bytes differ from the old only inside
// one feature's object, found by scanning out from the changed range,
// only that object is read and checked, and the rest is the old list's.
// The answer is the one Parse gives: the new document is the old one,
// which parses to the list before the turn, with one array element
// replaced by a JSON value that is a valid feature
// (schemas.PlainValidList), read as strictly as Parse reads the list
// (schemas.DecodeJSON: no duplicate or case-variant keys, valid UTF-8,
// nothing around it but white space; unknown keys are not plainly
// valid). Anything else (a change across features or outside them, a
// value that is not plainly valid, old bytes that are not the list's)
// is parsed in full.

// In Encode's output each feature's object starts a line with four
// spaces and '{' and ends one with four spaces and '}'; nothing else
// does (raw newlines never occur inside JSON strings, and a feature
// holds no object).
const (
	featureOpen  = "\n    {"
	featureClose = "\n    }"
)

// encodedList is a list and its bytes as Encode writes them (the
// Encoder's memory).
type encodedList struct {
	list  List     // a copy (Clone): lists are changed in place; this one never is
	data  []byte   // Encode(&list)
	spans [][2]int // each feature's object in data: from its '{' to after its '}'
}

// featureSpans finds the features' objects in Encode's output.
func featureSpans(data []byte, n int) ([][2]int, bool) {
	spans := make([][2]int, 0, n)
	at := 0
	for range n {
		i := bytes.Index(data[at:], []byte(featureOpen))
		if i < 0 {
			return nil, false
		}
		start := at + i + len(featureOpen) - 1
		j := bytes.Index(data[start:], []byte(featureClose))
		if j < 0 {
			return nil, false
		}
		end := start + j + len(featureClose)
		spans = append(spans, [2]int{start, end})
		at = end
	}
	if bytes.Contains(data[at:], []byte(featureOpen)) {
		return nil, false
	}
	return spans, true
}

// parseEdit parses data as an edit of one feature of before, whose bytes
// are old: Marshal(before). ok is false when it cannot tell: then Parse
// decides.
//
// Marshal's bytes are Parse's for before but in two things, both seen
// here: nil steps, which Marshal writes as [] and Parse reads as empty
// steps (the result has them empty), and a string that is not UTF-8,
// which Marshal writes with \ufffd escapes and Parse reads as U+FFFD (old
// bytes holding the escape are not taken).
func parseEdit(before *List, old, data []byte) (after *List, ok bool) {
	n := len(before.Features)
	if n == 0 || len(old) == 0 || bytes.Contains(old, []byte(`\ufffd`)) {
		return nil, false
	}
	p := commonPrefix(old, data)
	if p == len(old) && p == len(data) {
		return asParsed(before, -1, Feature{}), true
	}
	s := commonSuffix(old[p:], data[p:])
	start, end, ok := featureAround(old, p, len(old)-s)
	if !ok {
		return nil, false
	}
	i := featureIndex(before, old, start, end)
	if i < 0 {
		return nil, false
	}
	// The scan found before's feature i where Marshal writes it, or old
	// is not Marshal(before): then Parse decides.
	if enc, err := encodeFeature(before.Features[i]); err != nil || !bytes.Equal(enc, old[start:end]) {
		return nil, false
	}
	newEnd := end + len(data) - len(old)
	if newEnd < start {
		return nil, false
	}
	v, ok := oneValue(data[start:newEnd])
	if !ok || !schemas.PlainValidList(map[string]any{"version": json.Number("1"), "goal": "g", "features": []any{v}}) {
		return nil, false
	}
	return asParsed(before, i, decodeFeature(v)), true
}

// featureAround is the object [start, end) in old, Encode's output, of
// the feature that holds the changed bytes [from, to): the last one
// opened at or before from, when it closes at or after to.
func featureAround(old []byte, from, to int) (start, end int, ok bool) {
	k := bytes.LastIndex(old[:min(from+1, len(old))], []byte(featureOpen))
	if k < 0 {
		return 0, 0, false
	}
	start = k + len(featureOpen) - 1
	j := bytes.Index(old[start:], []byte(featureClose))
	if j < 0 {
		return 0, 0, false
	}
	end = start + j + len(featureClose)
	return start, end, to <= end
}

// featureIndex is the position in before of the feature whose object in
// old is [start, end): the one feature with the id the object starts
// with, or else the features opened before it, counted from whichever end
// of the list is nearer. -1 when the count is not a feature of before.
func featureIndex(before *List, old []byte, start, end int) int {
	const idKey = "{\n      \"id\": \""
	if obj := old[start:end]; bytes.HasPrefix(obj, []byte(idKey)) {
		if q := bytes.IndexByte(obj[len(idKey):], '"'); q >= 0 {
			if i, ok := onlyWithID(before, obj[len(idKey):len(idKey)+q]); ok {
				return i
			}
		}
	}
	n := len(before.Features)
	var i int
	if start < len(old)-end {
		i = bytes.Count(old[:start], []byte(featureOpen))
	} else {
		i = n - 1 - bytes.Count(old[end:], []byte(featureOpen))
	}
	if i < 0 || i >= n {
		return -1
	}
	return i
}

// onlyWithID is the one feature of l whose id is id, when exactly one is.
func onlyWithID(l *List, id []byte) (int, bool) {
	found := -1
	for i := range l.Features {
		if l.Features[i].ID == string(id) {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// asParsed is the list Parse gives for Marshal(l) with feature i (none
// when i is -1) replaced by f: a copy of l's, its nil steps empty.
func asParsed(l *List, i int, f Feature) *List {
	c := l.Clone()
	if i >= 0 {
		c.Features[i] = f
	}
	for k := range c.Features {
		if c.Features[k].Steps == nil {
			c.Features[k].Steps = []string{}
		}
	}
	return &c
}

// commonPrefix is the length of the longest common prefix of a and b.
// Lists run to a megabyte, so it compares blocks with bytes.Equal (the
// runtime's vector compare) rather than byte by byte: blocks of 4 KiB
// until one differs, then blocks an eighth the size inside it, down to
// 8 bytes and then single bytes. Each finer size steps at most 7 times
// past the block the coarser one stopped at.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for size := 4096; size >= 8; size /= 8 {
		for i+size <= n && bytes.Equal(a[i:i+size], b[i:i+size]) {
			i += size
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b,
// found as commonPrefix finds a prefix, from the ends.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	i := n // a[i:] and b[i:] are equal
	for size := 4096; size >= 8; size /= 8 {
		for i >= size && bytes.Equal(a[i-size:i], b[i-size:i]) {
			i -= size
		}
	}
	for i > 0 && a[i-1] == b[i-1] {
		i--
	}
	return n - i
}

// oneValue decodes b as exactly one JSON value (white space around it
// allowed), as strictly as schemas.Decode reads the whole list: it is the
// same reader (schemas.DecodeJSON).
func oneValue(b []byte) (any, bool) {
	v, err := schemas.DecodeJSON("", b)
	return v, err == nil
}

// encodeFeature is one feature as Encode writes it inside the list.
func encodeFeature(f Feature) ([]byte, error) {
	if f.Steps == nil {
		f.Steps = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(&f); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
