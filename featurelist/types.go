package featurelist

import "slices"

// List is the content of feature-list.json.
type List struct {
	Version  int       `json:"version"`
	Goal     string    `json:"goal"`
	Features []Feature `json:"features"`
}

// Feature is one verifiable unit of the goal.
type Feature struct {
	ID          string   `json:"id"`
	Category    string   `json:"category"`
	Description string   `json:"description"`
	Steps       []string `json:"steps"`
	Verify      string   `json:"verify,omitempty"`
	Passes      bool     `json:"passes"`
	Evidence    *string  `json:"evidence"`
}

// Passing counts the features that pass.
func (l *List) Passing() int {
	n := 0
	for _, f := range l.Features {
		if f.Passes {
			n++
		}
	}
	return n
}

// FirstPending returns the first feature that does not pass, or nil.
func (l *List) FirstPending() *Feature {
	for i := range l.Features {
		if !l.Features[i].Passes {
			return &l.Features[i]
		}
	}
	return nil
}

// Find returns the feature with the given id, or nil.
func (l *List) Find(id string) *Feature {
	for i := range l.Features {
		if l.Features[i].ID == id {
			return &l.Features[i]
		}
	}
	return nil
}

// Equal reports whether a and b are the same list, field by field, with
// no encoding: nil and empty steps differ, as they do in encoding/json's
// output.
func Equal(a, b *List) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Version != b.Version || a.Goal != b.Goal || len(a.Features) != len(b.Features) {
		return false
	}
	for i := range a.Features {
		if !SameFeature(&a.Features[i], &b.Features[i]) {
			return false
		}
	}
	return true
}

// SameFeature is Equal for one feature.
func SameFeature(x, y *Feature) bool {
	if x.ID != y.ID || x.Category != y.Category || x.Description != y.Description || x.Verify != y.Verify ||
		x.Passes != y.Passes || (x.Steps == nil) != (y.Steps == nil) || !slices.Equal(x.Steps, y.Steps) {
		return false
	}
	return (x.Evidence == nil) == (y.Evidence == nil) && (x.Evidence == nil || *x.Evidence == *y.Evidence)
}

// Clone is a copy of l that shares nothing l's fields can change.
//
// Lists run to thousands of features, so the copies of the features' steps
// share one new array, and their evidence another, rather than taking an
// allocation each. Each feature's steps are capped at their length, so an
// append to them moves them rather than writing over the next feature's.
// Nil steps stay nil, empty ones empty.
func (l *List) Clone() List {
	c := *l
	c.Features = slices.Clone(l.Features)
	steps, evidence := 0, 0
	for i := range l.Features {
		steps += len(l.Features[i].Steps)
		if l.Features[i].Evidence != nil {
			evidence++
		}
	}
	allSteps := make([]string, 0, steps)
	allEvidence := make([]string, 0, evidence)
	for i := range c.Features {
		f := &c.Features[i]
		if f.Steps != nil {
			at := len(allSteps)
			allSteps = append(allSteps, f.Steps...)
			f.Steps = allSteps[at:len(allSteps):len(allSteps)]
		}
		if f.Evidence != nil {
			allEvidence = append(allEvidence, *f.Evidence)
			f.Evidence = &allEvidence[len(allEvidence)-1]
		}
	}
	return c
}

// Clone is a copy of f that shares nothing f's fields can change.
func (f Feature) Clone() Feature {
	f.Steps = slices.Clone(f.Steps)
	if f.Evidence != nil {
		e := *f.Evidence
		f.Evidence = &e
	}
	return f
}
