package harness

import (
	"bytes"
	"testing"
)

// A state.json written before the regression sweep (no
// limits.regressionChecks, no lastChecked) loads with the default sweep;
// one that turned it off keeps 0, and lastChecked round-trips.
func TestRegressionChecksOfOlderStateFiles(t *testing.T) {
	store, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	good := strictStateSeed(t)
	old := bytes.Replace(good, []byte(`,"regressionChecks":3`), nil, 1)
	if bytes.Equal(old, good) {
		t.Fatalf("the seed has no regressionChecks to drop: %s", good)
	}
	for _, c := range []struct {
		name string
		doc  []byte
		want int
	}{
		{"older file", old, DefaultRegressionChecks},
		{"sweep off", bytes.Replace(good, []byte(`"regressionChecks":3`), []byte(`"regressionChecks":0`), 1), 0},
		{"five", bytes.Replace(good, []byte(`"regressionChecks":3`), []byte(`"regressionChecks":5`), 1), 5},
	} {
		st, err := store.decodeState("0a1b2c3d", c.doc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if st.Limits.RegressionChecks != c.want {
			t.Errorf("%s: regressionChecks %d, want %d", c.name, st.Limits.RegressionChecks, c.want)
		}
	}
	withChecked := bytes.Replace(good, []byte(`{"version":1,`), []byte(`{"version":1,"lastChecked":{"a":4},`), 1)
	st, err := store.decodeState("0a1b2c3d", withChecked)
	if err != nil || st.LastChecked["a"] != 4 {
		t.Fatalf("lastChecked: %v, %v", st, err)
	}
}
