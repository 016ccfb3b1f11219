package featurelist

import (
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

func sampleList() *List {
	ev := "ok"
	return &List{Version: 1, Goal: "g", Features: []Feature{
		{ID: "a-1", Category: "c", Description: "d", Steps: []string{"s"}, Verify: "true", Passes: true, Evidence: &ev},
		{ID: "b", Category: "c", Description: "d", Steps: []string{}},
	}}
}

// TestValidAgreesWithTheSchema: Valid says yes exactly when the encoded
// list passes the schema.
func TestValidAgreesWithTheSchema(t *testing.T) {
	cases := map[string]func(*List){
		"valid":          func(*List) {},
		"version 2":      func(l *List) { l.Version = 2 },
		"empty goal":     func(l *List) { l.Goal = "" },
		"bad id":         func(l *List) { l.Features[0].ID = "Bad" },
		"long id":        func(l *List) { l.Features[0].ID = strings.Repeat("a", 81) },
		"no category":    func(l *List) { l.Features[1].Category = "" },
		"no text":        func(l *List) { l.Features[1].Description = "" },
		"nil steps":      func(l *List) { l.Features[1].Steps = nil },
		"empty step":     func(l *List) { l.Features[0].Steps = []string{""} },
		"no features":    func(l *List) { l.Features = nil },
		"empty verify":   func(l *List) { l.Features[0].Verify = "" },
		"empty evidence": func(l *List) { e := ""; l.Features[1].Evidence = &e },
	}
	for name, edit := range cases {
		l := sampleList()
		edit(l)
		want := schemas.ValidateGo(schemas.FeatureList, FileName, l) == nil
		if got := Valid(l); got != want {
			t.Errorf("%s: Valid = %v, the schema says %v", name, got, want)
		}
	}
}

func TestEqualAndClone(t *testing.T) {
	a := sampleList()
	c := a.Clone()
	if !Equal(a, &c) {
		t.Fatal("a clone is not Equal")
	}
	*c.Features[0].Evidence = "changed"
	c.Features[0].Steps[0] = "changed"
	if *a.Features[0].Evidence != "ok" || a.Features[0].Steps[0] != "s" {
		t.Fatal("Clone shares evidence or steps")
	}
	for name, edit := range map[string]func(*List){
		"goal": func(l *List) { l.Goal = "h" }, "passes": func(l *List) { l.Features[1].Passes = true },
		"evidence": func(l *List) { l.Features[0].Evidence = nil }, "steps": func(l *List) { l.Features[0].Steps = append(l.Features[0].Steps, "t") },
		"nil steps": func(l *List) { l.Features[1].Steps = nil }, "verify": func(l *List) { l.Features[1].Verify = "x" },
		"features": func(l *List) { l.Features = l.Features[:1] },
	} {
		b := sampleList()
		edit(b)
		if Equal(sampleList(), b) {
			t.Errorf("%s: Equal misses the change", name)
		}
	}
	if !Equal(nil, nil) || Equal(a, nil) {
		t.Error("Equal of nil lists")
	}
}

// TestCloneKeepsFeaturesApart: the clone's features share arrays with
// each other, never in a way one feature's change can see from another.
func TestCloneKeepsFeaturesApart(t *testing.T) {
	e1, e2 := "one", "two"
	a := &List{Version: 1, Goal: "g", Features: []Feature{
		{ID: "a", Steps: []string{"a1", "a2"}, Evidence: &e1},
		{ID: "b", Steps: nil},
		{ID: "c", Steps: []string{}},
		{ID: "d", Steps: []string{"d1"}, Evidence: &e2},
	}}
	c := a.Clone()
	if !Equal(a, &c) {
		t.Fatal("a clone is not Equal")
	}
	if c.Features[1].Steps != nil || c.Features[2].Steps == nil {
		t.Fatal("Clone changed nil or empty steps")
	}
	c.Features[0].Steps = append(c.Features[0].Steps, "a3")
	c.Features[2].Steps = append(c.Features[2].Steps, "c1")
	*c.Features[0].Evidence = "changed"
	if c.Features[3].Steps[0] != "d1" || *c.Features[3].Evidence != "two" {
		t.Fatalf("a change to one cloned feature reached another: %+v", c.Features[3])
	}
	if len(a.Features[0].Steps) != 2 || len(a.Features[2].Steps) != 0 || a.Features[3].Steps[0] != "d1" || e1 != "one" {
		t.Fatal("a change to the clone reached the list")
	}
	if empty := (&List{}).Clone(); empty.Features != nil {
		t.Fatal("the clone of a list without features has features")
	}
}
