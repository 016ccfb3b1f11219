package schemas

import (
	"errors"
	"strings"
	"testing"
)

func TestAllSchemasCompile(t *testing.T) {
	for _, n := range []string{FeatureList, State, LoopState, Control, StatusOutput, ListOutput, HistoryOutput, ConfigOutput, ErrorOutput, DoctorOutput, VersionOutput, Events} {
		if _, err := schema(n); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	if got := len(Names()); got != 14 {
		t.Fatalf("Names() = %d schemas, want 14", got)
	}
}

func TestValidateNamesFilePointerAndRule(t *testing.T) {
	cases := []struct {
		name, schema, doc string
		want              []string
	}{
		{"syntax", LoopState, `{"status":`, []string{"x.json", "not valid JSON"}},
		{"trailing", LoopState, `{"status":"complete","summary":"s"} {}`, []string{"trailing data"}},
		{"enum", LoopState, `{"status":"done","summary":"s"}`, []string{"x.json at /status", "continue"}},
		{"missing nextStep", LoopState, `{"status":"continue","summary":"s"}`, []string{"nextStep"}},
		{"missing blocker", LoopState, `{"status":"blocked","summary":"s"}`, []string{"blocker"}},
		{"blank summary", LoopState, `{"status":"complete","summary":"  "}`, []string{"/summary"}},
		{"bad id", FeatureList, `{"version":1,"goal":"g","features":[{"id":"Bad_Id","category":"c","description":"d","steps":[],"passes":false,"evidence":null}]}`, []string{"/features/0/id"}},
		{"state missing", State, `{"version":1}`, []string{"x.json at /", "missing properties"}},
		{"history outcome", HistoryOutput, `{"task":"0a1b2c3d","turns":[{"commit":"abcdef1","time":"2026-01-02T03:04:05Z","iteration":1,"status":"running","summary":"s","outcome":"continue"}]}`, []string{"/turns/0/outcome", "accepted"}},
		{"status outcome", StatusOutput, `{"lastOutcome":"running"}`, []string{"/lastOutcome"}},
		{"status next", StatusOutput, `{"next":[{"command":"grub resume 0a1b2c3d"}]}`, []string{"/next/0", "why"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.schema, "x.json", []byte(c.doc))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Validate = %v, want *Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateAcceptsGoodDocuments(t *testing.T) {
	docs := map[string]string{
		LoopState:     `{"status":"continue","summary":"did x","nextStep":"do y","feature":"a-b","extra":1}`,
		FeatureList:   `{"version":1,"goal":"g","features":[{"id":"a-b","category":"c","description":"d","steps":["s"],"verify":"true","passes":false,"evidence":null}]}`,
		Control:       `{"version":1,"requests":[{"kind":"pause","at":"2026-01-02T03:04:05Z"}]}`,
		HistoryOutput: `{"task":"0a1b2c3d","turns":[{"commit":"abcdef1","time":"2026-01-02T03:04:05Z","iteration":1,"status":"running","summary":"s","outcome":"rejected","failed":["setup_error"]}]}`,
		TurnLedger:    `{"version":1,"iteration":1,"phase":"execution","decision":"cancelled","summary":"s","findings":[{"kind":"setup_error","text":"401"}],"checks":[],"durationSeconds":1,"usage":{"inputTokens":0,"cachedInputTokens":0,"outputTokens":0,"requests":1},"passing":0,"total":1,"status":"paused","time":"2026-01-02T03:04:05Z"}`,
	}
	for schema, doc := range docs {
		if err := Validate(schema, "x.json", []byte(doc)); err != nil {
			t.Errorf("%s: %v", schema, err)
		}
	}
}
