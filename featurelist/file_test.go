package featurelist

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

func ev(s string) *string { return &s }

// sample returns a valid list of n pending features with ids f1…fn.
func sample(n int) *List {
	l := &List{Version: 1, Goal: "add OAuth login to the API"}
	for i := range n {
		id := "f" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		l.Features = append(l.Features, Feature{
			ID:          id,
			Category:    "functional",
			Description: "the API does thing " + id,
			Steps:       []string{"run the server", "call /" + id},
			Passes:      false,
		})
	}
	return l
}

// clone deep-copies a list so a test can mutate it freely.
func clone(l *List) *List {
	c := *l
	c.Features = make([]Feature, len(l.Features))
	for i, f := range l.Features {
		f.Steps = append([]string(nil), f.Steps...)
		if f.Evidence != nil {
			f.Evidence = ev(*f.Evidence)
		}
		c.Features[i] = f
	}
	return &c
}

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		wantErr []string // substrings of the error; nil means success
	}{
		{"valid", `{"version":1,"goal":"g","features":[{"id":"a-b","category":"c","description":"d","steps":["s"],"verify":"true","passes":false,"evidence":null}]}`, nil},
		{"unknown fields refused", `{"version":1,"goal":"g","extra":true,"features":[{"id":"a","category":"c","description":"d","steps":[],"passes":true,"evidence":"e","note":1}]}`,
			[]string{`x/feature-list.json at /extra: unknown key "extra"`, `x/feature-list.json at /features/0/note: unknown key "note"`}},
		{"stray bracket after the list", `{"version":1,"goal":"g","features":[]}` + "\n]\n", []string{"x/feature-list.json: not valid JSON: trailing data"}},
		{"stray brace after the list", `{"version":1,"goal":"g","features":[]}}`, []string{"trailing data"}},
		{"duplicate key", `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":false,"passes":true,"evidence":null}]}`,
			[]string{`x/feature-list.json at /features/0/passes: key "passes" appears twice`}},
		{"invalid UTF-8", "{\"version\":1,\"goal\":\"g\xc0\",\"features\":[]}", []string{"x/feature-list.json: not valid JSON: invalid UTF-8 at byte 22"}},
		{"invalid json", `{"version":1,`, []string{"x/feature-list.json", "not valid JSON"}},
		{"trailing data", `{"version":1,"goal":"g","features":[]} []`, []string{"trailing data"}},
		{"bad id", `{"version":1,"goal":"g","features":[{"id":"Bad_Id","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`, []string{"x/feature-list.json at /features/0/id"}},
		{"wrong version", `{"version":2,"goal":"g","features":[]}`, []string{"at /version"}},
		{"missing passes", `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"evidence":null}]}`, []string{"/features/0", "passes"}},
		{"fractional version", `{"version":1.0,"goal":"g","features":[]}`, []string{"x/feature-list.json at /version: version 1.0 is not a whole number"}},
		{"keys differing in case are refused", `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":false,"Passes":true,"ID":"Bad Id","evidence":null}]}`,
			[]string{`x/feature-list.json at /features/0/Passes: key "passes" and key "Passes" differ only in case`}},
		{"a key in another case alone is refused", `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"PASSES":true,"evidence":null}]}`,
			[]string{`x/feature-list.json at /features/0/PASSES: unknown key "PASSES"; keys are case-sensitive: write "passes"`}},
		{"huge number", `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":false,"evidence":null}],"x":1e999}`, []string{`unknown key "x"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse("x/feature-list.json", []byte(c.doc))
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if l.Version != 1 || l.Goal != "g" || len(l.Features) == 0 {
					t.Fatalf("Parse decoded %+v", l)
				}
				return
			}
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v, want *schemas.Error", err)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseDecodesFields(t *testing.T) {
	l, err := Parse("f", []byte(`{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":["s1","s2"],"verify":"make test","passes":true,"evidence":"ok"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := l.Features[0]
	if f.ID != "a" || f.Category != "c" || f.Description != "d" || len(f.Steps) != 2 || f.Verify != "make test" || !f.Passes || f.Evidence == nil || *f.Evidence != "ok" {
		t.Fatalf("decoded %+v", f)
	}
}

// TestParseRefusesWhatOthersReadDifferently: each document here reads
// as a passing feature, or one with a verify command or evidence grub
// did not check, to some other reader (a Go struct, a first-wins reader,
// Python's json, jq); grub refuses them all, naming the file and where.
func TestParseRefusesWhatOthersReadDifferently(t *testing.T) {
	const f = `{"id":"a","category":"c","description":"d","steps":[],%s,"evidence":null}`
	doc := func(keys string) string {
		return `{"version":1,"goal":"g","features":[` + fmt.Sprintf(f, keys) + `]}`
	}
	for _, c := range []struct{ doc, want string }{
		{doc(`"passes":false,"Passes":true`), "/features/0/Passes"},
		{doc(`"passes":false,"passes":true`), "/features/0/passes"},
		{doc(`"PASSES":true`), "/features/0/PASSES"},
		{doc(`"passes":false,"Evidence":"forged"`), "/features/0/evidence"},
		{doc(`"passes":false,"Verify":"true"`), "/features/0/Verify"},
		{doc(`"passes":false,"ID":"Bad Id"`), "/features/0/ID"},
		{doc(`"passes":false`) + "]", "trailing data"},
		{doc(`"passes":false`) + "}", "trailing data"},
	} {
		_, err := Parse("x/feature-list.json", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), "x/feature-list.json") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Parse = %v, want an error at %s", c.doc, err, c.want)
		}
	}
}

func TestMarshal(t *testing.T) {
	l := sample(2)
	l.Features[0].Description = "renders one <li> per item & more"
	l.Features[0].Verify = "go test ./..."
	l.Features[1].Steps = nil
	l.Features[1].Passes = true
	l.Features[1].Evidence = ev("curl printed 200")
	data, err := Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{
		"{\n  \"version\": 1,\n  \"goal\": ",
		"\n    {\n      \"id\": \"fa\",",
		`"renders one <li> per item & more"`,
		`"steps": []`,
		`"evidence": null`,
		`"evidence": "curl printed 200"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("Marshal output lacks %q:\n%s", want, s)
		}
	}
	if !strings.HasSuffix(s, "}\n") || strings.HasSuffix(s, "\n\n") {
		t.Errorf("Marshal output must end with exactly one newline: %q", s[len(s)-5:])
	}
	if strings.Count(s, `"verify"`) != 1 {
		t.Errorf("an empty verify must be omitted:\n%s", s)
	}
	back, err := Parse("f", data)
	if err != nil {
		t.Fatalf("Marshal output does not parse: %v", err)
	}
	again, err := Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Errorf("Marshal is not stable:\n%s\n---\n%s", data, again)
	}
}

func TestMarshalRejectsInvalidList(t *testing.T) {
	cases := map[string]*List{
		"nil":        nil,
		"empty goal": {Version: 1, Goal: ""},
		"bad id":     {Version: 1, Goal: "g", Features: []Feature{{ID: "Bad Id", Category: "c", Description: "d"}}},
	}
	for name, l := range cases {
		if _, err := Marshal(l); err == nil {
			t.Errorf("%s: Marshal succeeded, want an error", name)
		}
	}
}
