package featurelist

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/grub-dev/grub/schemas"
)

// A turn changes one feature of a list of maybe 2,000, and parsing the
// whole file was most of what refereeing it cost. So CheckTurnBytes
// remembers the last list it read whose bytes are exactly what Encode
// writes for it, with where each feature's object lies in them; when the
// next turn starts from that list (before is Equal to it) and the new
// bytes differ from the old only inside one feature's object, only that
// object is parsed and checked, and the rest is the old list's. The
// answer is the one Parse gives: the new document is the old one, which
// parsed to the remembered list, with one array element replaced by a
// JSON value that is a valid feature (schemas.PlainValidList), read as
// strictly as Parse reads the list (schemas.DecodeJSON: no duplicate or
// case-variant keys, valid UTF-8; unknown keys are not plainly valid);
// anything else (a change across features, a value that is not plainly
// valid, bytes not in Encode's form) is parsed in full.

// encodedList is a list and its bytes as Encode writes them.
type encodedList struct {
	list  List     // a copy (Clone): lists are changed in place; this one never is
	data  []byte   // Encode(&list)
	spans [][2]int // each feature's object in data: from its '{' to after its '}'
}

var lastRead struct {
	sync.Mutex
	e *encodedList
}

// parseAndRemember is Parse, remembering the list when data is Encode's
// form of it.
func parseAndRemember(file string, data []byte) (*List, error) {
	l, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	if enc, err := Encode(l); err == nil && bytes.Equal(enc, data) {
		if spans, ok := featureSpans(data, len(l.Features)); ok {
			remember(&encodedList{list: l.Clone(), data: bytes.Clone(data), spans: spans})
		}
	}
	return l, nil
}

func remember(e *encodedList) {
	lastRead.Lock()
	lastRead.e = e
	lastRead.Unlock()
}

// featureSpans finds the features' objects in Encode's output: each starts
// a line with four spaces and '{' and ends one with four spaces and '}'
// (raw newlines never occur inside JSON strings).
func featureSpans(data []byte, n int) ([][2]int, bool) {
	spans := make([][2]int, 0, n)
	open, close := []byte("\n    {"), []byte("\n    }")
	at := 0
	for range n {
		i := bytes.Index(data[at:], open)
		if i < 0 {
			return nil, false
		}
		start := at + i + len(open) - 1
		j := bytes.Index(data[start:], close)
		if j < 0 {
			return nil, false
		}
		end := start + j + len(close)
		spans = append(spans, [2]int{start, end})
		at = end
	}
	if bytes.Contains(data[at:], open) {
		return nil, false
	}
	return spans, true
}

// parseEdit parses data as an edit of one feature of before, when the
// last list read is before (see above). ok is false when it cannot tell:
// then Parse decides.
func parseEdit(before *List, data []byte) (after *List, ok bool) {
	lastRead.Lock()
	e := lastRead.e
	lastRead.Unlock()
	if e == nil || !Equal(&e.list, before) {
		return nil, false
	}
	old := e.data
	p := commonPrefix(old, data)
	if p == len(old) && p == len(data) {
		l := e.list.Clone()
		return &l, true
	}
	s := commonSuffix(old[p:], data[p:])
	i, found := spanHolding(e.spans, p, len(old)-s)
	if !found {
		return nil, false
	}
	delta := len(data) - len(old)
	start, end := e.spans[i][0], e.spans[i][1]+delta
	if end < start {
		return nil, false
	}
	v, ok := oneValue(data[start:end])
	if !ok || !schemas.PlainValidList(map[string]any{"version": json.Number("1"), "goal": "g", "features": []any{v}}) {
		return nil, false
	}
	// The remembered list is never changed, so the new one may share the
	// other features' steps and evidence with it: only the array of
	// features is copied. The caller gets a copy of its own.
	kept := e.list
	kept.Features = slices.Clone(e.list.Features)
	kept.Features[i] = decodeFeature(v)
	// Keep it for the next turn when the new bytes are Encode's form too.
	if enc, err := encodeFeature(kept.Features[i]); err == nil && bytes.Equal(enc, data[start:end]) {
		spans := make([][2]int, len(e.spans))
		copy(spans, e.spans)
		spans[i][1] = end
		for k := i + 1; k < len(spans); k++ {
			spans[k][0] += delta
			spans[k][1] += delta
		}
		remember(&encodedList{list: kept, data: bytes.Clone(data), spans: spans})
	}
	l := kept.Clone()
	return &l, true
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

// spanHolding is the feature whose object holds the changed bytes
// [from, to) of the old data.
func spanHolding(spans [][2]int, from, to int) (int, bool) {
	for i, sp := range spans {
		if sp[0] <= from && to <= sp[1] {
			return i, true
		}
		if sp[0] > from {
			break
		}
	}
	return 0, false
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
