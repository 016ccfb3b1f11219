package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/schemas"
)

// This file holds state.json's encoding, writing and reading: the
// accepted feature list is encoded once per change and spliced in.

// marshalState encodes st as indented JSON and validates it. Sandbox
// paths inside the workspace are made relative to it first (relativePaths):
// a committed state.json holds nothing that only makes sense on one machine.
//
// The baseline (the accepted feature list, most of the file) changes at
// most once a turn while state is saved several times: it is encoded and
// checked once per change (baselineJSON) and spliced into the rest of
// state's JSON, which is encoded and checked on its own. The bytes are
// those json.MarshalIndent gives for st.
func (s *Store) marshalState(st *State) ([]byte, error) {
	st.Sandbox.Allow = s.relativePaths(st.Sandbox.Allow)
	rel := s.Rel(s.Path(st.ID, FileState))
	if !ValidID(st.ID) {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("%q is not a task id (8 lowercase hex characters)", st.ID)}}}
	}
	rest := *st
	rest.FeatureListBaseline = nil
	data, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	data = append(data, '\n')
	if err := schemas.Validate(schemas.State, rel, data); err != nil || st.FeatureListBaseline == nil {
		return data, err
	}
	base, err := baselineJSON(st.FeatureListBaseline, rel)
	if err != nil {
		return nil, err
	}
	return spliceBaseline(data, base)
}

// nullBaseline is the baseline's line in state's JSON when it is nil:
// a raw newline, which JSON strings never hold, so it is found only there.
var nullBaseline = []byte("\n  \"featureListBaseline\": null")

// spliceBaseline puts base in place of the null baseline in data.
func spliceBaseline(data, base []byte) ([]byte, error) {
	i := bytes.Index(data, nullBaseline)
	if i < 0 {
		return nil, errors.New("encode state: no featureListBaseline field")
	}
	at := i + len(nullBaseline) - len("null")
	out := make([]byte, 0, len(data)+len(base))
	out = append(out, data[:at]...)
	out = append(out, base...)
	return append(out, data[at+len("null"):]...), nil
}

// lastBaseline is the baseline last encoded (a copy: lists are changed
// in place, SetGoal does) and its JSON as state.json holds it, checked
// against the schema.
var lastBaseline struct {
	sync.Mutex
	list  featurelist.List
	json  []byte
	spans [][2]int // each feature's object in json (nil: not found)
}

// baselineJSON returns l as state.json holds it (indented one level), and
// checks it against the feature-list schema as part of state: an invalid
// one is a *schemas.Error naming state.json and /featureListBaseline/…
// Encoding and checking 2,000 features costs more than the rest of a
// turn's saves together, so the last list is remembered and compared
// field by field instead (featurelist.Equal: no encoding, no parsing),
// and a new one is checked as a value (featurelist.Valid) before the
// schema is asked for the error.
func baselineJSON(l *featurelist.List, rel string) ([]byte, error) {
	lastBaseline.Lock()
	defer lastBaseline.Unlock()
	if lastBaseline.json != nil && featurelist.Equal(&lastBaseline.list, l) {
		return lastBaseline.json, nil
	}
	if data, ok := respliceBaseline(l); ok {
		return data, nil
	}
	if !featurelist.Valid(l) {
		err := schemas.ValidateGo(schemas.FeatureList, rel, l)
		var se *schemas.Error
		if errors.As(err, &se) {
			se.Schema = schemas.State
			for i := range se.Violations {
				se.Violations[i].Pointer = "/featureListBaseline" + se.Violations[i].Pointer
			}
		}
		if err != nil {
			return nil, err
		}
	}
	data, err := json.MarshalIndent(l, "  ", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	lastBaseline.list, lastBaseline.json = l.Clone(), data
	lastBaseline.spans = baselineSpans(data, len(l.Features))
	return data, nil
}

// respliceBaseline encodes a baseline that differs from the last one in
// one feature (a turn's flip) by encoding and checking that feature
// alone and putting it in place of the old one's JSON. The caller holds
// lastBaseline's lock.
func respliceBaseline(l *featurelist.List) ([]byte, bool) {
	last := &lastBaseline.list
	if lastBaseline.spans == nil || l.Version != last.Version || l.Goal != last.Goal || len(l.Features) != len(last.Features) {
		return nil, false
	}
	changed := -1
	for i := range l.Features {
		if !featurelist.SameFeature(&l.Features[i], &last.Features[i]) {
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
	if !featurelist.Valid(&featurelist.List{Version: l.Version, Goal: l.Goal, Features: []featurelist.Feature{f}}) {
		return nil, false
	}
	enc, err := json.MarshalIndent(&f, baselineFeatureIndent, "  ")
	if err != nil {
		return nil, false
	}
	old, sp := lastBaseline.json, lastBaseline.spans[changed]
	data := make([]byte, 0, len(old)-(sp[1]-sp[0])+len(enc))
	data = append(append(append(data, old[:sp[0]]...), enc...), old[sp[1]:]...)
	delta := len(enc) - (sp[1] - sp[0])
	spans := slices.Clone(lastBaseline.spans)
	spans[changed][1] += delta
	for k := changed + 1; k < len(spans); k++ {
		spans[k][0] += delta
		spans[k][1] += delta
	}
	lastBaseline.list.Features[changed] = f.Clone()
	lastBaseline.json, lastBaseline.spans = data, spans
	return data, true
}

// baselineFeatureIndent is the indent of a feature's object lines in
// state.json: the baseline is one level in, its features three.
const baselineFeatureIndent = "      "

// baselineSpans finds each feature's object in the baseline's JSON: it
// starts a line indented baselineFeatureIndent with '{' and ends one with
// '}' (raw newlines never occur inside JSON strings). nil when the count
// is not n.
func baselineSpans(data []byte, n int) [][2]int {
	open, close := []byte("\n"+baselineFeatureIndent+"{"), []byte("\n"+baselineFeatureIndent+"}")
	spans := make([][2]int, 0, n)
	at := 0
	for range n {
		i := bytes.Index(data[at:], open)
		if i < 0 {
			return nil
		}
		start := at + i + len(open) - 1
		j := bytes.Index(data[start:], close)
		if j < 0 {
			return nil
		}
		spans = append(spans, [2]int{start, start + j + len(close)})
		at = start + j + len(close)
	}
	if bytes.Contains(data[at:], open) {
		return nil
	}
	return spans
}

// SaveState validates st and writes it to state.json atomically. An invalid
// state is never written. SaveState writes st as given: the caller sets
// UpdatedAt.
func (s *Store) SaveState(st *State) error {
	_, err := s.WriteState(st)
	return err
}

// WriteState is SaveState that returns the bytes written.
func (s *Store) WriteState(st *State) ([]byte, error) {
	data, err := s.marshalState(st)
	if err != nil {
		return nil, err
	}
	if err := s.writeOwnFile(st.ID, FileState, data, 0o644); err != nil {
		return nil, err
	}
	return data, nil
}

// StateBytes returns the raw content of a task's state.json. It must be a
// regular file: anything else there is a *NotRegularError. A task folder
// whose state.json is gone while its other files are there is a
// *DamagedError (grub doctor --repair rebuilds it); no folder at all is a
// *NotFoundError.
func (s *Store) StateBytes(id string) ([]byte, error) {
	if !ValidID(id) {
		return nil, s.notFound(id)
	}
	path := s.Path(id, FileState)
	data, err := s.readRegular(path)
	var nr *NotRegularError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &nr):
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		if s.hasTaskFiles(id) {
			return nil, &DamagedError{ID: id, File: s.Rel(path), Problem: "is missing, though the task's other files are there",
				Fix: "rebuild it with grub doctor --repair " + id}
		}
		return nil, s.notFound(id)
	}
	return nil, fmt.Errorf("read %s: %w", s.Rel(path), err)
}

// LoadState reads, validates and decodes a task's state.json. A file that is
// not valid is a *schemas.Error naming the file, the JSON pointer and the
// rule; a missing task is a *NotFoundError.
func (s *Store) LoadState(id string) (*State, error) {
	data, err := s.StateBytes(id)
	if err != nil {
		return nil, err
	}
	return s.decodeState(id, data)
}

func (s *Store) decodeState(id string, data []byte) (*State, error) {
	rel := s.Rel(s.Path(id, FileState))
	if err := schemas.Validate(schemas.State, rel, data); err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Syntax: err}
	}
	if st.ID != id {
		return nil, &schemas.Error{File: rel, Schema: schemas.State, Violations: []schemas.Violation{
			{Pointer: "/id", Rule: fmt.Sprintf("is %q but the task folder is %q; restore the file from git", st.ID, id)}}}
	}
	return &st, nil
}
