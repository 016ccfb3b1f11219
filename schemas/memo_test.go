package schemas

import (
	"encoding/json"
	"strings"
	"testing"
)

// A feature list found valid is not checked again, alone or as a state's
// baseline, and the answers stay those of a full check.
func TestMemoKeepsAnswers(t *testing.T) {
	list := `{"version":1,"goal":"memo test","features":[{"id":"a-b","category":"c","description":"d","steps":["s"],"passes":false,"evidence":null}]}`
	bad := strings.Replace(list, `"a-b"`, `"Bad_Id"`, 1)
	state := func(baseline, status string) string {
		return `{"version":1,"id":"0a1b2c3d","goal":"g","locale":"en","status":"` + status + `","phase":"execution",
		"createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","currentIteration":1,"awaitingTurn":false,
		"consecutiveFailures":0,"consecutiveBlocked":0,"noProgressTurns":0,
		"limits":{"maxIterations":1,"maxConsecutiveFailures":1,"maxInitializerFailures":1,"maxBlocked":1,"tokenBudget":0,
		"timeBudgetSeconds":0,"minFeatures":1,"maxFeatures":1,"turnTimeoutSeconds":1,"initTimeoutSeconds":1},
		"usage":{"inputTokens":0,"cachedInputTokens":0,"outputTokens":0,"requests":0,"tokensUsed":0,"timeUsedSeconds":0},
		"agent":{"kind":"command","command":"true"},"featureListBaseline":` + baseline + `,"pending":{}}`
	}
	check := func(name, doc string, wantErr string) {
		t.Helper()
		err := Validate(name, "x.json", []byte(doc))
		switch {
		case wantErr == "" && err != nil:
			t.Fatalf("%s: %v", name, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Fatalf("%s: error %v, want one containing %q", name, err, wantErr)
		}
	}
	for range 2 { // the second round answers from the memo
		check(State, state(list, "running"), "")
		check(FeatureList, list, "")
		check(State, state(list, "nonsense"), "x.json at /status")
		check(State, state(bad, "running"), "/featureListBaseline")
		check(FeatureList, bad, "x.json at /features/0/id")
	}
}

// The digest tells apart values that print alike.
func TestDigestTellsValuesApart(t *testing.T) {
	vals := []any{nil, true, false, "1", json.Number("1"), 1.0, json.Number("1.0"), []any{}, map[string]any{},
		[]any{"a", "b"}, []any{"ab"}, map[string]any{"a": "b"}, map[string]any{"ab": ""}, []any{[]any{}}, []any{nil}}
	seen := map[digest]int{}
	for i, v := range vals {
		d := digestOf(v)
		if j, ok := seen[d]; ok {
			t.Errorf("values %d and %d have the same digest", j, i)
		}
		seen[d] = i
	}
}
