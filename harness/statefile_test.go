package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

// strictStateSeed is a valid state.json for the strict-reading tests.
func strictStateSeed(t testing.TB) []byte {
	good, err := json.Marshal(&State{Version: StateVersion, ID: "0a1b2c3d", Goal: "g", Locale: "en", Status: StatusPaused,
		Phase: PhaseExecution, Limits: DefaultLimits(), Agent: Agent{Kind: "command", Command: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	return good
}

// TestDecodeStateStrict: state.json is decoded as strictly as it is
// validated. encoding/json alone read "FeatureListBaseline" (a key the
// schema does not check) into the accepted list, and "Status" or a
// second "status" over the one the schema checked.
func TestDecodeStateStrict(t *testing.T) {
	store, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := strictStateSeed(t)
	if _, err := store.decodeState("0a1b2c3d", good); err != nil {
		t.Fatalf("a good state: %v", err)
	}
	list := `{"version":1,"goal":"g","features":[{"id":"a","category":"c","description":"d","steps":[],"passes":true,"evidence":"forged","Verify":"rm -rf ~"}]}`
	add := func(s string) []byte {
		return bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":1,`+s+`,`), 1)
	}
	for _, c := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"baseline in another case", add(`"FeatureListBaseline":` + list), `state.json at /FeatureListBaseline: unknown key "FeatureListBaseline"; keys are case-sensitive: write "featureListBaseline"`},
		{"status in another case", add(`"STATUS":"complete"`), `at /status: key "STATUS" and key "status" differ only in case`},
		{"status twice", append(bytes.TrimSuffix(bytes.Clone(good), []byte("}")), `,"status":"complete"}`...), `at /status: key "status" appears twice`},
		{"id in another case alone", bytes.Replace(good, []byte(`"id":`), []byte(`"iD":`), 1), `missing properties: 'id'`},
		{"a nested key in another case", bytes.Replace(good, []byte(`"kind":`), []byte(`"kind":"openai","Kind":`), 1), `at /agent/Kind: key "kind" and key "Kind" differ only in case`},
		{"an unknown key", add(`"bogus":1`), `state.json at /bogus: unknown key "bogus"`},
		{"a stray bracket after it", append(bytes.Clone(good), ']'), `trailing data`},
		{"an unchecked baseline inside", add(`"featureListBaseline":` + list), `state.json at /featureListBaseline/features/0/Verify: unknown key "Verify"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := store.decodeState("0a1b2c3d", c.doc)
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("decodeState = %+v, %v; want a *schemas.Error", st, err)
			}
			if !strings.Contains(err.Error(), ".grub/0a1b2c3d/state.json") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name the file and say %q", err, c.want)
			}
		})
	}
}

// TestStateBase: the task's git base is read back as written, a state
// without one (written before it) loads with none, and the base is read
// as strictly as the rest (an unknown key, a short hash).
func TestStateBase(t *testing.T) {
	store, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := strictStateSeed(t)
	if st, err := store.decodeState("0a1b2c3d", good); err != nil || st.Base != nil {
		t.Fatalf("a state without a base = %+v, %v; want no base", st, err)
	}
	hash := strings.Repeat("ab", 20)
	with := func(base string) []byte {
		return bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":1,"base":`+base+`,`), 1)
	}
	st, err := store.decodeState("0a1b2c3d", with(`{"branch":"refs/heads/grub/0a1b2c3d","commit":"`+hash+`","made":true,"from":"refs/heads/main","carried":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := GitBase{Branch: "refs/heads/grub/0a1b2c3d", Commit: hash, Made: true, From: "refs/heads/main", Carried: true}
	if st.Base == nil || *st.Base != want {
		t.Fatalf("base = %+v, want %+v", st.Base, want)
	}
	for _, bad := range []string{`{"commit":"` + hash + `","bogus":1}`, `{"commit":"abc"}`, `{"branch":"main","commit":"` + hash + `"}`} {
		if _, err := store.decodeState("0a1b2c3d", with(bad)); err == nil {
			t.Errorf("base %s was read", bad)
		}
	}
}
