package featurelist

import (
	"slices"
	"sync"

	"github.com/grub-dev/grub/schemas"
)

// Encoder is Marshal for a list that changes a feature at a time: grub
// writes the accepted list after every turn that flips a feature, and
// encoding and checking 2,000 features costs more than the rest of the
// write. It remembers the last list it marshalled, with where each
// feature's object lies in the bytes; a list Equal to it gets the same
// bytes, and one that differs in a single feature gets the old bytes with
// that feature's object encoded and checked alone and put in its place.
// The bytes are always Marshal's for the list. The zero Encoder is ready
// to use and safe for concurrent use.
type Encoder struct {
	mu   sync.Mutex
	last *encodedList
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
	data, err := Encode(l)
	if err != nil {
		return nil, err
	}
	if !Valid(withSteps(l)) {
		if err := schemas.Validate(schemas.FeatureList, FileName, data); err != nil {
			e.last = nil
			return nil, err
		}
	}
	e.last = nil
	if spans, ok := featureSpans(data, len(l.Features)); ok {
		e.last = &encodedList{list: l.Clone(), data: data, spans: spans}
	}
	return data, nil
}

// Prime makes data the bytes remembered for l, as if Marshal had given
// them: the caller knows they are Marshal's for l (a file grub wrote,
// checked by its digest).
func (e *Encoder) Prime(l *List, data []byte) {
	spans, ok := featureSpans(data, len(l.Features))
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = &encodedList{list: l.Clone(), data: data, spans: spans}
}

// reencode is Marshal for a list that differs from the last one in one
// feature's fields only (not in number, order of the rest, version or
// goal), when that feature alone is plainly valid. The caller holds mu.
func (e *Encoder) reencode(l *List) ([]byte, bool) {
	last := e.last
	if last == nil || l.Version != last.list.Version || l.Goal != last.list.Goal || len(l.Features) != len(last.list.Features) {
		return nil, false
	}
	changed := -1
	for i := range l.Features {
		if !SameFeature(&l.Features[i], &last.list.Features[i]) {
			if changed >= 0 {
				return nil, false
			}
			changed = i
		}
	}
	if changed < 0 {
		return nil, false
	}
	f := l.Features[changed]
	if !Valid(withSteps(&List{Version: l.Version, Goal: l.Goal, Features: []Feature{f}})) {
		return nil, false
	}
	enc, err := encodeFeature(f)
	if err != nil {
		return nil, false
	}
	sp := last.spans[changed]
	data := make([]byte, 0, len(last.data)-(sp[1]-sp[0])+len(enc))
	data = append(append(append(data, last.data[:sp[0]]...), enc...), last.data[sp[1]:]...)
	delta := len(enc) - (sp[1] - sp[0])
	spans := make([][2]int, len(last.spans))
	copy(spans, last.spans)
	spans[changed][1] += delta
	for k := changed + 1; k < len(spans); k++ {
		spans[k][0] += delta
		spans[k][1] += delta
	}
	// The remembered list is never changed, so the next one shares the
	// other features' steps and evidence with it.
	next := &encodedList{list: last.list, data: data, spans: spans}
	next.list.Features = slices.Clone(last.list.Features)
	next.list.Features[changed] = f.Clone()
	e.last = next
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
