package controller

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// A turn.ended event says the outcome every view says (harness's one
// rule), and every outcome a recorded turn can have is one the events
// schema takes; unrecorded is only ever a report's turn known from git.
func TestTurnEndedOutcomeIsTheViewsOutcome(t *testing.T) {
	for _, o := range harness.Outcomes {
		e := events.New(events.TurnEnded, "0a1b2c3d", time.Unix(0, 0), 1)
		e.Ended = &events.Ended{Phase: "execution", Decision: "continue", Outcome: string(o), Status: "running"}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		err = schemas.Validate(schemas.Events, "turn.ended", data)
		if o == harness.OutcomeUnrecorded {
			if err == nil {
				t.Errorf("the events schema takes %q, which no recorded turn has", o)
			}
			continue
		}
		if err != nil {
			t.Errorf("outcome %q: %v", o, err)
		}
	}
	caught := harness.TurnRecord{Phase: harness.PhaseExecution, Decision: loopstate.Continue, Status: harness.StatusRunning,
		Findings: []harness.Finding{{Kind: harness.FindingIllegalEdit, Text: "feature-1: description changed"}}}
	if got, want := turnEnded(caught).Outcome, string(caught.Outcome()); got != want || want != string(harness.OutcomeRejected) {
		t.Errorf("a caught illegal edit: turn.ended says %q, the views %q (want rejected)", got, want)
	}
	crashed := harness.TurnRecord{Phase: harness.PhaseExecution, Decision: loopstate.Unknown, Status: harness.StatusRunning}
	if got := turnEnded(crashed).Outcome; got != string(harness.OutcomeUnknown) {
		t.Errorf("a turn a crash cut short: turn.ended says %q, want unknown", got)
	}
}
