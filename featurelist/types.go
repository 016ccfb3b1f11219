package featurelist

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
