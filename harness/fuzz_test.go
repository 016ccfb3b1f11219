package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/schemas"
)

// FuzzDecodeState feeds arbitrary bytes to the state loader: it must never
// panic, must reject anything that is not a valid state with a
// *schemas.Error, and whatever it accepts must save and load back equal.
func FuzzDecodeState(f *testing.F) {
	store, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	const id = "0a1b2c3d"
	good, err := json.Marshal(&State{Version: StateVersion, ID: id, Goal: "g", Locale: "en", Status: StatusPaused,
		Phase: PhaseExecution, Limits: DefaultLimits(), Agent: Agent{Kind: "command", Command: "x"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{string(good), `{}`, `null`, `{"version":1}`, `[`, "", `{"version":1,"id":"0a1b2c3d"}`} {
		f.Add([]byte(seed))
	}
	for _, keys := range []string{`"STATUS":"complete"`, `"status":"complete"`, `"FeatureListBaseline":null`, `"bogus":1`, `"Usage":{}`} {
		f.Add(bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":1,`+keys+`,`), 1))
	}
	f.Add(append(bytes.Clone(good), ']'))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := store.decodeState(id, data)
		if err != nil {
			var se *schemas.Error
			var de *DamagedError // an acceptedList naming files that are not there
			if !errors.As(err, &se) && !errors.As(err, &de) {
				t.Fatalf("error is neither a *schemas.Error nor a *DamagedError: %T %v", err, err)
			}
			return
		}
		if err := schemas.ValidateGo(schemas.State, "state.json", st); err != nil {
			t.Fatalf("accepted a state that does not re-validate: %v", err)
		}
		// Decoded as strictly as validated: every key read is one grub
		// writes, exactly, or one whose value is the zero grub leaves out.
		st.FeatureListBaseline = nil // loaded from files of its own, not written back here
		back, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var in, out any
		_ = json.Unmarshal(data, &in)
		_ = json.Unmarshal(back, &out)
		if p := keyNotWritten(in, out, ""); p != "" {
			t.Fatalf("accepted a key grub does not write (%s):\n%s", p, data)
		}
	})
}

// keyNotWritten is the pointer of a key of in, a state as read, that is
// not in out, the state as grub writes it, with a value that is not a
// zero value; "" when there is none.
func keyNotWritten(in, out any, ptr string) string {
	switch x := in.(type) {
	case map[string]any:
		o, _ := out.(map[string]any)
		for k, v := range x {
			w, there := o[k]
			switch {
			case there:
				if p := keyNotWritten(v, w, ptr+"/"+k); p != "" {
					return p
				}
			case k != "featureListBaseline" && !zeroJSON(v):
				return ptr + "/" + k
			}
		}
	case []any:
		o, _ := out.([]any)
		for i, v := range x {
			if i < len(o) {
				if p := keyNotWritten(v, o[i], fmt.Sprintf("%s/%d", ptr, i)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// zeroJSON reports whether v decodes to a Go zero value (what omitempty
// and omitzero leave out).
func zeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case float64:
		return x == 0
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !zeroJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// FuzzReadControl feeds arbitrary bytes to the control.json reader.
func FuzzReadControl(f *testing.F) {
	store, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	const id = "0a1b2c3d"
	store.Private = f.TempDir()
	if err := os.MkdirAll(store.Dir(id), 0o755); err != nil {
		f.Fatal(err)
	}
	if _, err := store.PrivateDir(id); err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"version":1,"requests":[{"kind":"pause","at":"2026-01-02T03:04:05Z"}]}`,
		`{"version":1,"requests":[{"kind":"limits","at":"2026-01-02T03:04:05Z","limits":{"maxIterations":5}}]}`,
		`{"version":1,"requests":[]}`, `{}`, `[`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path, err := store.ControlPath(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cf, err := store.readControl(path)
		if err != nil {
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *schemas.Error: %T %v", err, err)
			}
			return
		}
		for _, r := range cf.Requests {
			if r.Kind == "" {
				t.Fatalf("accepted a request without a kind: %+v", r)
			}
		}
	})
}

// FuzzAcceptedChanges feeds arbitrary bytes, and an arbitrary applying
// length, as accepted-list.changes.jsonl: rebuilding the accepted list must
// never panic, and a list it returns is always the one the digest names.
func FuzzAcceptedChanges(f *testing.F) {
	store, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	st := fullState()
	if err := os.MkdirAll(store.Dir(st.ID), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := store.SaveState(st); err != nil {
		f.Fatal(err)
	}
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	if err := store.SaveState(st); err != nil {
		f.Fatal(err)
	}
	acc := *st.AcceptedList
	good, err := os.ReadFile(store.Path(st.ID, FileAcceptedChanges))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, acc.ChangesBytes)
	f.Add(append(good, good...), int64(len(good))*2)
	f.Add([]byte(`{"index":-1,"feature":{}}`+"\n"), int64(26))
	f.Add([]byte(`{"index":99}`+"\n"), int64(13))
	f.Add([]byte("not json\n"), int64(9))
	f.Fuzz(func(t *testing.T, changes []byte, n int64) {
		if err := os.WriteFile(store.Path(st.ID, FileAcceptedChanges), changes, 0o644); err != nil {
			t.Fatal(err)
		}
		a := acc
		a.ChangesBytes = n
		l, ok := store.acceptedFromFiles(st.ID, a)
		if !ok {
			return
		}
		data, err := featurelist.Marshal(l)
		if err != nil || digestOf(data) != acc.SHA256 {
			t.Fatalf("rebuilt a list that is not the one named: %v\n%s", err, data)
		}
	})
}
