package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

const oneFeature = `{"id":"a","category":"c","description":"d","steps":["s"],"passes":false,"evidence":null}`

func list(features ...string) string {
	return `{"version":1,"goal":"g","features":[` + strings.Join(features, ",") + `]}`
}

// refused runs Validate and Decode on doc and checks that both refuse it
// with an error containing every want.
func refused(t *testing.T, schema, doc string, want ...string) {
	t.Helper()
	for _, f := range []func() error{
		func() error { return Validate(schema, "x.json", []byte(doc)) },
		func() error { _, err := Decode(schema, "x.json", []byte(doc)); return err },
	} {
		err := f()
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("%s: got %v, want a *Error", doc, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", doc, err, w)
			}
		}
	}
}

// TestDecodeRefusesTrailingData: a stray ']' or '}' after the list is
// not "nothing after the value" (encoding/json's More says false before
// them), nor is any other byte but white space.
func TestDecodeRefusesTrailingData(t *testing.T) {
	for _, tail := range []string{"]", "}", "\n]\n", " {}", "x", ",", "\x00"} {
		refused(t, FeatureList, list(oneFeature)+tail, "x.json", "trailing data")
	}
	if err := Validate(FeatureList, "x.json", []byte(" \t\r\n"+list(oneFeature)+" \t\r\n")); err != nil {
		t.Fatalf("white space around the value: %v", err)
	}
}

// TestDecodeRefusesDuplicateKeys: a key given twice is refused, at its
// pointer, wherever it is (encoding/json keeps the last, a first-wins
// reader the first).
func TestDecodeRefusesDuplicateKeys(t *testing.T) {
	dup := strings.Replace(oneFeature, `"passes":false`, `"passes":false,"passes":true`, 1)
	refused(t, FeatureList, list(oneFeature, dup), "x.json at /features/1/passes", `key "passes" appears twice`)
	refused(t, FeatureList, `{"version":1,"goal":"g","goal":"h","features":[]}`, "x.json at /goal", "appears twice")
	refused(t, State, `{"id":"0a1b2c3d","id":"0a1b2c3d"}`, "x.json at /id", "appears twice")
	refused(t, LoopState, `{"status":"continue","summary":"s","nextStep":"n","status":"complete"}`, "at /status", "twice")
	// Escapes are read: "p\u0061sses" is "passes".
	esc := strings.Replace(oneFeature, `"passes":false`, `"passes":false,"p\u0061sses":true`, 1)
	refused(t, FeatureList, list(esc), "x.json at /features/0/passes", "appears twice")
}

// TestDecodeRefusesCaseVariantKeys: keys that encoding/json takes for the
// same name (any case, and "ſ" for "s", "K" for "k") are refused, in a
// small object and in one past smallObject keys.
func TestDecodeRefusesCaseVariantKeys(t *testing.T) {
	for _, key := range []string{"PASSES", "Passes", "paſſes"} {
		f := strings.Replace(oneFeature, `"passes":false`, `"passes":false,"`+key+`":true`, 1)
		refused(t, FeatureList, list(f), "x.json at /features/0/"+key, "differ only in case")
	}
	ev := strings.Replace(oneFeature, `"evidence":null`, `"Evidence":"forged","evidence":null`, 1)
	refused(t, FeatureList, list(ev), "x.json at /features/0/evidence", `"Evidence"`, "differ only in case")
	var b strings.Builder
	for i := range smallObject + 4 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	refused(t, LoopState, `{`+b.String()+`"K3":1}`, "x.json at /K3", "differ only in case")
	refused(t, LoopState, `{`+b.String()+`"k7":1}`, "x.json at /k7", "appears twice")
}

// TestValidateRefusesUnknownKeys: the feature list's schema allows only
// its own keys, and says which key, where, and what to write instead.
func TestValidateRefusesUnknownKeys(t *testing.T) {
	extra := strings.Replace(oneFeature, `"evidence":null`, `"evidence":null,"note":"x"`, 1)
	refused(t, FeatureList, list(extra), "x.json at /features/0/note", `unknown key "note"`, "id, passes, steps, verify")
	refused(t, FeatureList, `{"version":1,"goal":"g","features":[],"notes":[]}`, "x.json at /notes", `unknown key "notes"`, "features, goal, version")
	lone := strings.Replace(oneFeature, `"passes":false`, `"PASSES":true`, 1)
	refused(t, FeatureList, list(lone), "x.json at /features/0/PASSES", `keys are case-sensitive: write "passes"`)
	slash := strings.Replace(oneFeature, `"evidence":null`, `"evidence":null,"a/b~":1`, 1)
	refused(t, FeatureList, list(slash), "x.json at /features/0/a~1b~0", `unknown key "a/b~"`)
}

// TestDecodeRefusesBadText: JSON text is UTF-8, and a \u escape of half
// a surrogate pair is no character (Go reads U+FFFD, Python a lone
// surrogate); a whole pair is fine.
func TestDecodeRefusesBadText(t *testing.T) {
	refused(t, FeatureList, list(strings.Replace(oneFeature, `"d"`, "\"d\xff\"", 1)), "x.json", "invalid UTF-8 at byte")
	refused(t, FeatureList, list(strings.Replace(oneFeature, `"d"`, "\"\xed\xa0\x80\"", 1)), "invalid UTF-8")
	for _, s := range []string{`\ud800`, `\udc00`, `x\uD83Dy`, `\ud83d\u0041`, `\ude00\ud83d`} {
		refused(t, FeatureList, list(strings.Replace(oneFeature, `"d"`, `"`+s+`"`, 1)), "x.json at /features/0/description", "surrogate pair")
	}
	refused(t, LoopState, `{"st\udfffatus":1}`, "surrogate")
	for _, s := range []string{`\ud83d\ude00`, `\\ud800`, `\u00e9\n\"`} {
		if err := Validate(FeatureList, "x.json", []byte(list(strings.Replace(oneFeature, `"d"`, `"`+s+`"`, 1)))); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestOnlySpace(t *testing.T) {
	for s, want := range map[string]bool{"": true, " \t\r\n": true, "\v": false, "\f": false, "\u00a0": false, " ]": false} {
		if got := OnlySpace([]byte(s)); got != want {
			t.Errorf("OnlySpace(%q) = %v", s, got)
		}
	}
}

type inner struct {
	Name string `json:"name"`
}

type embedded struct {
	Extra int `json:"extra,omitempty"`
}

type outer struct {
	embedded
	Status   string           `json:"status"`
	Summary  string           `json:"summary"`
	NextStep string           `json:"nextStep"`
	ID       string           `json:"id"`
	In       *inner           `json:"in"`
	List     []inner          `json:"list"`
	Map      map[string]inner `json:"map"`
	Free     any              `json:"free"`
	Plain    int
	Skip     int `json:"-"`
}

// TestDecodeIntoExactKeys: a key is read only into the field it names
// exactly; one in another case or that no field names is refused at its
// pointer.
func TestDecodeIntoExactKeys(t *testing.T) {
	var o outer
	good := `{"status":"continue","summary":"s","nextStep":"n","id":"a","in":{"name":"n"},"list":[{"name":"x"}],"map":{"K":{"name":"y"}},"free":{"Any":1},"Plain":1,"extra":2}`
	if err := DecodeInto(LoopState, "x.json", []byte(good), &o); err != nil {
		t.Fatal(err)
	}
	if o.ID != "a" || o.In.Name != "n" || o.List[0].Name != "x" || o.Map["K"].Name != "y" || o.Plain != 1 || o.Extra != 2 {
		t.Fatalf("decoded %+v", o)
	}
	for doc, want := range map[string]string{
		`{"status":"continue","summary":"s","nextStep":"n","ID":"a"}`:               `x.json at /ID: unknown key "ID"; keys are case-sensitive: write "id"`,
		`{"status":"continue","summary":"s","nextStep":"n","in":{"Name":"n"}}`:      `at /in/Name`,
		`{"status":"continue","summary":"s","nextStep":"n","list":[{},{"nAme":1}]}`: `at /list/1/nAme`,
		`{"status":"continue","summary":"s","nextStep":"n","map":{"a/b":{"x":1}}}`:  `at /map/a~1b/x: unknown key "x"`,
		`{"status":"continue","summary":"s","nextStep":"n","Skip":1}`:               `at /Skip: unknown key`,
		`{"status":"continue","summary":"s","nextStep":"n","id":"a"}]`:              `trailing data`,
	} {
		err := DecodeInto(LoopState, "x.json", []byte(doc), &outer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

// FuzzDecodeJSON: what DecodeJSON accepts is valid UTF-8 JSON that
// encoding/json reads as the same value, white space after it changes
// nothing, and a stray ] after it is refused.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range listCases {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"a":1,"A":2}`, `{"a":1,"a":2}`, `{"a":"\ud800"}`, "\"\xff\"", `{"a":[1]}]`, `{"ſ":1,"s":2}`, `[{"k":1,"K":1}]`, `"\ud83d\ude00"`, ` 1 `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeJSON("f.json", data)
		var se *Error
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("error is not a *Error: %v", err)
		}
		if _, err2 := DecodeJSON("f.json", append(bytes.Clone(data), " \n"...)); (err == nil) != (err2 == nil) {
			t.Fatalf("white space after the value changed the answer: %v, %v", err, err2)
		}
		if err != nil {
			return
		}
		if _, err := DecodeJSON("f.json", append(bytes.Clone(data), ']')); err == nil {
			t.Fatalf("accepted a stray ] after the value")
		}
		if !utf8.Valid(data) || !json.Valid(data) {
			t.Fatalf("accepted what is not UTF-8 JSON")
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var w any
		if err := dec.Decode(&w); err != nil || !reflect.DeepEqual(v, w) {
			t.Fatalf("read %v, encoding/json %v (%v)", v, w, err)
		}
	})
}
