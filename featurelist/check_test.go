package featurelist

import (
	"slices"
	"strings"
	"testing"
)

// base is the list before an execution turn: fa and fb pending, fc passing,
// fd regressed earlier (pending with evidence of the failure).
func base() *List {
	l := sample(4)
	l.Features[0].Verify = "make test-fa"
	l.Features[2].Passes = true
	l.Features[2].Evidence = ev("go test ./... passed")
	l.Features[3].Evidence = ev("login returned 500")
	return l
}

// checkTurnCase is one execution turn's edit of base() and what CheckTurn
// must say about it.
type checkTurnCase struct {
	name          string
	mutate        func(l *List)
	want          []string // each must appear in a distinct violation, in order
	wantFlipped   []string
	wantRegressed []string
}

var checkTurnCases = []checkTurnCase{
	{"no change", func(l *List) {}, nil, nil, nil},
	{"legal flip", func(l *List) {
		l.Features[0].Passes = true
		l.Features[0].Evidence = ev("make test-fa exited 0")
	}, nil, []string{"fa"}, nil},
	{"legal flip of a regressed feature with new evidence", func(l *List) {
		l.Features[3].Passes = true
		l.Features[3].Evidence = ev("fixed; login returns 200")
	}, nil, []string{"fd"}, nil},
	{"evidence of a passing feature changed", func(l *List) {
		l.Features[2].Evidence = ev("re-ran: still passes")
	}, nil, nil, nil},
	{"evidence noted on a pending feature", func(l *List) {
		l.Features[1].Evidence = ev("half done")
	}, nil, nil, nil},
	{"id changed", func(l *List) { l.Features[1].ID = "fb-renamed" },
		[]string{"feature `fb`: id changed to `fb-renamed`"}, nil, nil},
	{"category changed", func(l *List) { l.Features[0].Category = "ui" },
		[]string{"feature `fa`: category changed"}, nil, nil},
	{"description changed", func(l *List) { l.Features[1].Description += "!" },
		[]string{"feature `fb`: description changed"}, nil, nil},
	{"step edited", func(l *List) { l.Features[1].Steps[0] = "skip it" },
		[]string{"feature `fb`: steps changed"}, nil, nil},
	{"step added", func(l *List) { l.Features[1].Steps = append(l.Features[1].Steps, "more") },
		[]string{"feature `fb`: steps changed"}, nil, nil},
	{"verify changed", func(l *List) { l.Features[0].Verify = "true" },
		[]string{"feature `fa`: verify changed"}, nil, nil},
	{"verify removed", func(l *List) { l.Features[0].Verify = "" },
		[]string{"feature `fa`: verify changed"}, nil, nil},
	{"verify added", func(l *List) { l.Features[1].Verify = "true" },
		[]string{"feature `fb`: verify changed"}, nil, nil},
	{"version changed", func(l *List) { l.Version = 2 },
		[]string{"version changed (1 to 2)"}, nil, nil},
	{"goal changed", func(l *List) { l.Goal = "something easier" },
		[]string{"goal changed"}, nil, nil},
	{"two flips", func(l *List) {
		l.Features[0].Passes, l.Features[0].Evidence = true, ev("ok a")
		l.Features[1].Passes, l.Features[1].Evidence = true, ev("ok b")
	}, []string{"2 features flipped to passing (fa, fb); at most one per turn"}, []string{"fa", "fb"}, nil},
	{"flip without evidence", func(l *List) { l.Features[0].Passes = true },
		[]string{"feature `fa`: passes flipped to true without evidence"}, []string{"fa"}, nil},
	{"flip with blank evidence", func(l *List) {
		l.Features[0].Passes, l.Features[0].Evidence = true, ev(" \n\t")
	}, []string{"feature `fa`: passes flipped to true with blank evidence"}, []string{"fa"}, nil},
	{"flip with stale evidence", func(l *List) { l.Features[3].Passes = true },
		[]string{"feature `fd`: passes flipped to true without new evidence"}, []string{"fd"}, nil},
	{"regression with evidence", func(l *List) {
		l.Features[2].Passes, l.Features[2].Evidence = false, ev("go test fails: TestLogin")
	}, nil, nil, []string{"fc"}},
	{"regression without evidence", func(l *List) {
		l.Features[2].Passes, l.Features[2].Evidence = false, nil
	}, []string{"feature `fc`: passes flipped to false without evidence"}, nil, []string{"fc"}},
	{"regression keeping the passing evidence", func(l *List) { l.Features[2].Passes = false },
		[]string{"feature `fc`: passes flipped to false without new evidence"}, nil, []string{"fc"}},
	{"evidence removed", func(l *List) { l.Features[2].Evidence = nil },
		[]string{"feature `fc`: evidence removed from a passing feature"}, nil, nil},
	{"evidence blanked", func(l *List) { l.Features[2].Evidence = ev("  ") },
		[]string{"feature `fc`: evidence removed from a passing feature"}, nil, nil},
	{"feature removed", func(l *List) { l.Features = slices.Delete(l.Features, 1, 2) },
		[]string{"feature `fb` removed"}, nil, nil},
	{"feature added", func(l *List) {
		l.Features = slices.Insert(l.Features, 1, Feature{ID: "new-one", Category: "c", Description: "d", Steps: []string{"s"}})
	}, []string{"feature `new-one` added"}, nil, nil},
	{"feature duplicated", func(l *List) { l.Features = append(l.Features, l.Features[0]) },
		[]string{"feature `fa` added again"}, nil, nil},
	{"features reordered", func(l *List) { l.Features[0], l.Features[3] = l.Features[3], l.Features[0] },
		[]string{"features reordered"}, nil, nil},
	{"one removed and one added", func(l *List) {
		l.Features = append(l.Features[:3:3], Feature{ID: "zz", Category: "c", Description: "d", Steps: []string{"s"}})
		l.Features[0], l.Features[1] = l.Features[1], l.Features[0]
	}, []string{"feature `fd` removed", "feature `zz` added", "features reordered"}, nil, nil},
	{"all features removed", func(l *List) { l.Features = nil },
		[]string{"feature `fa` removed", "feature `fb` removed", "feature `fc` removed", "feature `fd` removed"}, nil, nil},
	{"many violations listed together", func(l *List) {
		l.Goal = "other"
		l.Features[0].Description = "x"
		l.Features[0].Passes = true
		l.Features[1].Passes = true
		l.Features[1].Evidence = ev("ok")
		l.Features[2].Evidence = nil
	}, []string{
		"goal changed",
		"feature `fa`: description changed",
		"feature `fa`: passes flipped to true without evidence",
		"feature `fc`: evidence removed",
		"2 features flipped to passing (fa, fb)",
	}, []string{"fa", "fb"}, nil},
}

func TestCheckTurn(t *testing.T) {
	for _, c := range checkTurnCases {
		t.Run(c.name, func(t *testing.T) {
			before := base()
			after := clone(before)
			c.mutate(after)
			ch, vs := CheckTurn(before, after)
			if len(vs) != len(c.want) {
				t.Fatalf("got %d violations, want %d:\n%s", len(vs), len(c.want), Describe(vs))
			}
			for i, w := range c.want {
				if !strings.Contains(vs[i].Message, w) {
					t.Errorf("violation %d = %q, want it to contain %q", i, vs[i].Message, w)
				}
				if vs[i].String() != vs[i].Message {
					t.Errorf("String() = %q, want the message", vs[i].String())
				}
			}
			if !slices.Equal(ch.Flipped, c.wantFlipped) {
				t.Errorf("Flipped = %v, want %v", ch.Flipped, c.wantFlipped)
			}
			if !slices.Equal(ch.Regressed, c.wantRegressed) {
				t.Errorf("Regressed = %v, want %v", ch.Regressed, c.wantRegressed)
			}
			// The before list must not be touched.
			if b := base(); Describe(mustCheck(t, b, before)) != "" {
				t.Errorf("CheckTurn modified its before list")
			}
		})
	}
}

func mustCheck(t *testing.T, before, after *List) []Violation {
	t.Helper()
	_, vs := CheckTurn(before, after)
	return vs
}

func TestCheckTurnViolationFields(t *testing.T) {
	before := base()
	after := clone(before)
	after.Features[1].Description = "changed"
	after.Goal = "changed"
	_, vs := CheckTurn(before, after)
	want := []Violation{
		{Feature: "", Field: "goal"},
		{Feature: "fb", Field: "description"},
	}
	if len(vs) != len(want) {
		t.Fatalf("violations: %s", Describe(vs))
	}
	for i, w := range want {
		if vs[i].Feature != w.Feature || vs[i].Field != w.Field {
			t.Errorf("violation %d = %+v, want Feature %q Field %q", i, vs[i], w.Feature, w.Field)
		}
	}
}

func TestCheckTurnNilLists(t *testing.T) {
	_, vs := CheckTurn(base(), nil)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "deleted") {
		t.Errorf("nil after: %s", Describe(vs))
	}
	_, vs = CheckTurn(nil, base())
	if len(vs) == 0 {
		t.Error("nil before and a full after list: no violations")
	}
}

func TestCheckTurnBytes(t *testing.T) {
	good := func(mutate func(l *List)) []byte {
		l := clone(base())
		mutate(l)
		data, err := Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	cases := []struct {
		name        string
		data        []byte
		want        []string // substrings of the violations, in order
		wantFlipped []string
	}{
		{"unchanged", good(func(*List) {}), nil, nil},
		{"legal flip", good(func(l *List) { l.Features[1].Passes, l.Features[1].Evidence = true, ev("ran it") }), nil, []string{"fb"}},
		{"illegal edit", good(func(l *List) { l.Features[1].Steps = nil }), []string{"feature `fb`: steps changed"}, nil},
		{"deleted", nil, []string{".grub/x/feature-list.json was deleted or emptied"}, nil},
		{"emptied", []byte(" \n"), []string{"was deleted or emptied"}, nil},
		{"invalid json", []byte(`{"version": 1, "goal": `), []string{"the feature list is no longer valid: .grub/x/feature-list.json: not valid JSON"}, nil},
		{"schema violation", []byte(`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":"yes","evidence":null}]}`),
			[]string{"no longer valid: .grub/x/feature-list.json at /features/0/passes"}, nil},
		{"not an object", []byte(`[]`), []string{"no longer valid"}, nil},
	}
	accepted, err := Marshal(base())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, vs, err := CheckTurnBytes(".grub/x/feature-list.json", base(), accepted, c.data)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if fch, fvs, _ := CheckTurnBytes(".grub/x/feature-list.json", base(), nil, c.data); !sameVerdict(ch, vs, fch, fvs) {
				t.Errorf("without the accepted bytes: %s %v, with them: %s %v", Describe(fvs), fch.Flipped, Describe(vs), ch.Flipped)
			}
			if len(vs) != len(c.want) {
				t.Fatalf("got %d violations, want %d: %s", len(vs), len(c.want), Describe(vs))
			}
			for i, w := range c.want {
				if !strings.Contains(vs[i].Message, w) {
					t.Errorf("violation %q does not contain %q", vs[i].Message, w)
				}
			}
			if !slices.Equal(ch.Flipped, c.wantFlipped) {
				t.Errorf("Flipped = %v, want %v", ch.Flipped, c.wantFlipped)
			}
		})
	}
	if _, _, err := CheckTurnBytes("f", nil, nil, []byte(`{}`)); err == nil {
		t.Error("CheckTurnBytes with a nil before list: no error")
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		vs   []Violation
		want string
	}{
		{nil, ""},
		{[]Violation{{Message: "goal changed"}}, "goal changed"},
		{[]Violation{{Message: "goal changed"}, {Message: "features reordered"}},
			"2 rule violations: (1) goal changed; (2) features reordered"},
	}
	for _, c := range cases {
		if got := Describe(c.vs); got != c.want {
			t.Errorf("Describe = %q, want %q", got, c.want)
		}
	}
}

// initialGoal is the task goal the initial plans of checkInitialCases are
// checked against.
const initialGoal = "add OAuth login to the API"

// checkInitialCase is one initial plan and what CheckInitial must say about
// it.
type checkInitialCase struct {
	name   string
	list   func() *List
	min    int
	max    int
	want   []string // substrings of the violations, in order
	fields []string // Field of each violation
}

var checkInitialCases = []checkInitialCase{
	{"good list", func() *List { return sample(15) }, 15, 40, nil, nil},
	{"exactly max", func() *List { return sample(40) }, 15, 40, nil, nil},
	{"too few", func() *List { return sample(3) }, 15, 40,
		[]string{"the list has 3 features; it needs at least 15"}, []string{"features"}},
	{"too many", func() *List { return sample(41) }, 15, 40,
		[]string{"the list has 41 features; it may have at most 40"}, []string{"features"}},
	{"duplicate id", func() *List {
		l := sample(5)
		l.Features[3].ID = "fa"
		l.Features[4].ID = "fa"
		return l
	}, 1, 10, []string{"feature `fa`: id is used by 3 features; ids must be unique"}, []string{"id"}},
	{"non-kebab ids", func() *List {
		l := sample(4)
		l.Features[0].ID = "Login_Form"
		l.Features[1].ID = "a--b"
		l.Features[2].ID = "-a"
		l.Features[3].ID = ""
		return l
	}, 1, 10, []string{
		"feature `Login_Form`: id is not kebab-case",
		"feature `a--b`: id is not kebab-case",
		"feature `-a`: id is not kebab-case",
		"feature #4: id is empty",
	}, []string{"id", "id", "id", "id"}},
	{"id too long", func() *List {
		l := sample(1)
		l.Features[0].ID = strings.Repeat("a", 81)
		return l
	}, 1, 10, []string{"id is 81 characters long"}, []string{"id"}},
	{"template id", func() *List {
		l := sample(1)
		l.Features[0].ID = "feature-id"
		return l
	}, 1, 10, []string{"feature `feature-id`: id is placeholder text"}, []string{"id"}},
	{"passes true and evidence set", func() *List {
		l := sample(2)
		l.Features[0].Passes = true
		l.Features[1].Evidence = ev("")
		return l
	}, 1, 10, []string{
		"feature `fa`: passes is true",
		"feature `fb`: evidence is set",
	}, []string{"passes", "evidence"}},
	{"blank fields", func() *List {
		l := sample(3)
		l.Features[0].Category = " "
		l.Features[1].Description = ""
		l.Features[1].Steps = []string{"ok", "\t"}
		l.Features[2].Steps = nil
		l.Features[2].Verify = "  "
		return l
	}, 1, 10, []string{
		"feature `fa`: category is blank",
		"feature `fb`: description is blank",
		"feature `fb`: step 2 is blank",
		"feature `fc`: has no steps",
		"feature `fc`: verify is blank",
	}, []string{"category", "description", "steps", "steps", "verify"}},
	{"placeholders", func() *List {
		l := sample(10)
		l.Features[0].Description = "TODO"
		l.Features[1].Description = "<description>"
		l.Features[2].Category = "TBD"
		l.Features[3].Steps[1] = "..."
		l.Features[4].Steps[0] = "…"
		l.Features[5].Description = "Lorem ipsum dolor sit amet"
		l.Features[6].Description = "Example feature"
		l.Features[7].Verify = "<verify command>"
		l.Features[8].Description = "FIXME: describe the login flow"
		l.Features[9].Category = "placeholder"
		return l
	}, 1, 10, []string{
		"feature `fa`: description is placeholder text (\"TODO\"); write the real description",
		"feature `fb`: description is placeholder text (\"<description>\")",
		"feature `fc`: category is placeholder text",
		"feature `fd`: step 2 is placeholder text",
		"feature `fe`: step 1 is placeholder text",
		"feature `ff`: description is placeholder text",
		"feature `fg`: description is placeholder text",
		"feature `fh`: verify is placeholder text",
		"feature `fi`: description is placeholder text",
		"feature `fj`: category is placeholder text",
	}, []string{"description", "description", "category", "steps", "steps", "description", "description", "verify", "description", "category"}},
	{"legitimate text with brackets and ellipses", func() *List {
		l := sample(3)
		l.Features[0].Description = "the todo list renders one <li> per item"
		l.Features[1].Description = "the search box shows a placeholder and a Loading... spinner"
		l.Features[2].Steps = []string{"GET /users/<id> returns the user", "run `go test ./...`"}
		l.Features[2].Verify = "test \"$(curl -s localhost:8080/health)\" = ok"
		return l
	}, 1, 10, nil, nil},
	{"goal mismatch", func() *List {
		l := sample(2)
		l.Goal = "add login"
		return l
	}, 1, 10, []string{"goal does not match the task goal; set it to exactly \"add OAuth login to the API\""}, []string{"goal"}},
	{"goal with surrounding white space", func() *List {
		l := sample(2)
		l.Goal = initialGoal + "\n"
		return l
	}, 1, 10, nil, nil},
	{"wrong version", func() *List {
		l := sample(2)
		l.Version = 0
		return l
	}, 1, 10, []string{"version is 0; it must be 1"}, []string{"version"}},
	{"nil list", func() *List { return nil }, 1, 10, []string{"the feature list is missing"}, []string{""}},
}

func TestCheckInitial(t *testing.T) {
	for _, c := range checkInitialCases {
		t.Run(c.name, func(t *testing.T) {
			vs := CheckInitial(c.list(), initialGoal, c.min, c.max)
			if len(vs) != len(c.want) {
				t.Fatalf("got %d violations, want %d:\n%s", len(vs), len(c.want), Describe(vs))
			}
			for i, w := range c.want {
				if !strings.Contains(vs[i].Message, w) {
					t.Errorf("violation %d = %q, want it to contain %q", i, vs[i].Message, w)
				}
				if vs[i].Field != c.fields[i] {
					t.Errorf("violation %d field = %q, want %q", i, vs[i].Field, c.fields[i])
				}
			}
		})
	}
}

func TestPlaceholder(t *testing.T) {
	yes := []string{
		"TODO", "todo", " TBD ", "FIXME", "XXX", "tba", "(TBD)", "[TODO]", "TODO.",
		"...", "…", "-", "???", "<>", "<feature-id>", "<description>", "<one line summary>",
		"{{ description }}", "placeholder", "Placeholder.", "lorem ipsum", "Lorem Ipsum dolor",
		"Example feature", "Description", "feature id", "n/a", "N/A",
		"TODO: write the steps", "Login form (TBD)", "see <FIXME>", "XXX: later",
	}
	no := []string{
		"", "   ", "the todo list shows items", "render a <div> for each row",
		"<div> wraps the list and the footer", "shows Loading... while fetching",
		"GET /users/<id> returns 200", "go test ./...", "the input shows placeholder text",
		"parse TODO comments in source files", "a <b>bold</b> title", "x <y> z",
		"functional", "Descriptions are shown under each item", "todo-app: add item",
		"TODOS are listed", "example: run make",
	}
	for _, s := range yes {
		if !placeholder(s) {
			t.Errorf("placeholder(%q) = false, want true", s)
		}
	}
	for _, s := range no {
		if placeholder(s) {
			t.Errorf("placeholder(%q) = true, want false", s)
		}
	}
}
