package events

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/schemas"
)

// examples are one event of each type, as a run fills them.
func examples() []Event {
	at := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	cost := 0.25
	task := json.RawMessage(nil)
	ev := func(t Type, it int) Event { return New(t, "0a1b2c3d", at, it) }
	run := ev(RunStarted, 0)
	run.Run = &Run{Phase: "initializer", Status: "running", MaxIterations: 25, Agent: "command", Dir: "/w/.grub/0a1b2c3d"}
	turn := ev(TurnStarted, 1)
	turn.Turn = &Turn{MaxIterations: 25, Phase: "execution", Feature: "feature-1", TokensUsed: 120, TokenBudget: 1000, CostUSD: &cost}
	act := ev(Activity, 1)
	act.Activity = &Doing{Text: "shell: go test ./...", Tokens: 15, CostUSD: &cost}
	done := ev(AgentDone, 1)
	done.Agent = &Agent{DurationSeconds: 3.5}
	find := ev(Finding, 1)
	find.Finding = &Caught{Kind: "illegal_edit", Text: "feature-1: description changed", Caught: true}
	chk := ev(Check, 1)
	chk.Check = &Ran{Name: "verify", Feature: "feature-1", Command: "test -f feature-1.done", Result: "failed", ExitCode: 1, DurationSeconds: 0.01}
	end := ev(TurnEnded, 1)
	end.Ended = &Ended{Phase: "execution", Feature: "feature-1", Decision: "continue", Summary: "did it", Outcome: OutcomeFailed, Findings: 1,
		Usage: Usage{InputTokens: 10, OutputTokens: 5, Requests: 1, CostUSD: &cost}, DurationSeconds: 3.5, Passing: 0, Total: 2,
		Status: "running", TokensUsed: 135, CostUSD: &cost}
	q := ev(Question, 2)
	q.Question = &Asked{Text: "Postgres or SQLite?", Options: []string{"postgres", "sqlite"}}
	stop := ev(Stopped, 2)
	stop.Stopped = &Stop{Status: "blocked", Reason: "the agent asks: Postgres or SQLite?", ExitCode: 3, Task: task}
	bare := New(Stopped, "", at, 0) // a command that failed before it had a task
	bare.Stopped = &Stop{ExitCode: 2, Error: "--max-iterations 0: must be at least 1"}
	return []Event{run, turn, act, done, find, chk, end, q, stop, bare}
}

// Every event type has an example, and every example is valid against
// schemas/events.schema.json as json.Marshal writes it.
func TestEveryEventValidates(t *testing.T) {
	seen := map[Type]bool{}
	for _, e := range examples() {
		seen[e.Type] = true
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.Validate(schemas.Events, string(e.Type), data); err != nil {
			t.Errorf("%s: %v\n%s", e.Type, err, data)
		}
	}
	for _, typ := range Types {
		if !seen[typ] {
			t.Errorf("no example of %s", typ)
		}
	}
	enum := schemaTypes(t)
	var names []string
	for _, typ := range Types {
		names = append(names, string(typ))
	}
	if !slices.Equal(enum, names) {
		t.Errorf("the schema's types %v, the package's %v", enum, names)
	}
}

// schemaTypes are the types the schema's type enum names, read from the
// file itself.
func schemaTypes(t *testing.T) []string {
	data, err := os.ReadFile("../schemas/" + schemas.Events)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties.Type.Enum
}

// The schema holds each type to its own data: another type's, a second
// one, none, or an unknown field are refused.
func TestSchemaRefusesMismatchedData(t *testing.T) {
	cases := map[string]string{
		"other type's data": `{"version":1,"type":"turn.activity","taskId":"0a1b2c3d","time":"2026-12-02T11:00:00Z","iteration":1,"finding":{"kind":"other","text":"x","caught":true}}`,
		"two payloads":      `{"version":1,"type":"turn.activity","taskId":"0a1b2c3d","time":"2026-12-02T11:00:00Z","iteration":1,"activity":{"tokens":1},"agent":{"durationSeconds":1}}`,
		"no payload":        `{"version":1,"type":"turn.started","taskId":"0a1b2c3d","time":"2026-12-02T11:00:00Z","iteration":1}`,
		"unknown field":     `{"version":1,"type":"turn.agent_done","taskId":"0a1b2c3d","time":"2026-12-02T11:00:00Z","iteration":1,"agent":{"durationSeconds":1},"output":"all of it"}`,
		"unknown type":      `{"version":1,"type":"item.started","taskId":"0a1b2c3d","time":"2026-12-02T11:00:00Z","iteration":1}`,
		"no task id":        `{"version":1,"type":"turn.agent_done","time":"2026-12-02T11:00:00Z","iteration":1,"agent":{"durationSeconds":1}}`,
		"wrong version":     `{"version":2,"type":"run.stopped","time":"2026-12-02T11:00:00Z","iteration":0,"stopped":{"exitCode":1}}`,
	}
	for name, doc := range cases {
		if err := schemas.Validate(schemas.Events, name, []byte(doc)); err == nil {
			t.Errorf("%s: valid, want refused:\n%s", name, doc)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
	long := strings.Repeat("é", TextLimit) // two bytes each
	got := Clip(long)
	if len(got) > TextLimit+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("Clip cut %d bytes to %d: %q…", len(long), len(got), got[:10])
	}
}
