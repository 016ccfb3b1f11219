package featurelist

import (
	"bytes"
	"sync"
)

// Encoder is Marshal for a list that changes a feature at a time: grub
// hashes the accepted list after every turn that flips a feature, and
// encoding and checking 2,000 features costs more than the rest of the
// turn's saves. It remembers the last list it marshalled, with where
// each feature's object lies in the bytes; a list Equal to it gets the
// same bytes, and one that differs in some features' fields gets the old
// bytes with those features' objects encoded and checked alone and put
// in their places.
// The bytes are always Marshal's for the list. The zero Encoder is ready
// to use and safe for concurrent use.
type Encoder struct {
	mu        sync.Mutex
	last      *encodedList
	reencoded int // lists re-encoded from the last one's bytes (for tests)
}

// Marshal returns Marshal(l). The bytes are shared with later calls: the
// caller must not change them.
func (e *Encoder) Marshal(l *List) ([]byte, error) {
	if l == nil {
		return Marshal(l)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last != nil && Equal(&e.last.list, l) {
		return e.last.data, nil
	}
	if data, ok := e.reencode(l); ok {
		return data, nil
	}
	e.last = nil
	data, err := Marshal(l)
	if err != nil {
		return nil, err
	}
	if spans, ok := featureSpans(data, len(l.Features)); ok {
		e.last = &encodedList{list: l.Clone(), data: data, spans: spans}
	}
	return data, nil
}

// Prime makes data the bytes remembered for l, as if Marshal had given
// them: the caller knows they are Marshal's for l (a file grub wrote,
// checked by its digest).
//
// Bytes holding the escape \ufffd are not taken: Marshal writes it only
// for a string that is not valid UTF-8, which decodes to U+FFFD, which
// Marshal writes as itself, so those bytes are not Marshal's for the
// decoded list.
func (e *Encoder) Prime(l *List, data []byte) {
	if bytes.Contains(data, []byte(`\ufffd`)) {
		return
	}
	spans, ok := featureSpans(data, len(l.Features))
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = &encodedList{list: l.Clone(), data: data, spans: spans}
}

// reencode is Marshal for a list that differs from the last one in some
// features' fields only (not in number, version or goal), when each of
// those features alone is plainly valid: their objects are encoded and
// spliced into the old bytes in one pass. The caller holds mu.
func (e *Encoder) reencode(l *List) ([]byte, bool) {
	last := e.last
	if last == nil || l.Version != last.list.Version || l.Goal != last.list.Goal || len(l.Features) != len(last.list.Features) {
		return nil, false
	}
	var changed []int
	var encs [][]byte
	size := len(last.data)
	for i := range l.Features {
		f := &l.Features[i]
		if SameFeature(f, &last.list.Features[i]) {
			continue
		}
		if !Valid(withSteps(&List{Version: l.Version, Goal: l.Goal, Features: []Feature{*f}})) {
			return nil, false
		}
		enc, err := encodeFeature(*f)
		if err != nil {
			return nil, false
		}
		changed, encs = append(changed, i), append(encs, enc)
		size += len(enc) - (last.spans[i][1] - last.spans[i][0])
	}
	if len(changed) == 0 {
		return nil, false
	}
	data := make([]byte, 0, size)
	spans := make([][2]int, len(last.spans))
	delta, prev, k := 0, 0, 0
	for i, sp := range last.spans {
		if k == len(changed) || changed[k] != i {
			spans[i] = [2]int{sp[0] + delta, sp[1] + delta}
			continue
		}
		data = append(data, last.data[prev:sp[0]]...)
		start := len(data)
		data = append(data, encs[k]...)
		spans[i] = [2]int{start, len(data)}
		delta += len(encs[k]) - (sp[1] - sp[0])
		prev = sp[1]
		last.list.Features[i] = l.Features[i].Clone() // last.list is the encoder's own copy
		k++
	}
	data = append(data, last.data[prev:]...)
	e.last = &encodedList{list: last.list, data: data, spans: spans}
	e.reencoded++
	return data, true
}

// withSteps is l with nil steps as empty ones, as Encode writes them, for
// Valid (which takes nil steps as null).
func withSteps(l *List) *List {
	c := *l
	c.Features = make([]Feature, len(l.Features))
	for i, f := range l.Features {
		if f.Steps == nil {
			f.Steps = []string{}
		}
		c.Features[i] = f
	}
	return &c
}
