package loopstate

// Status is the status of a turn's decision. An agent reports Continue,
// Complete or Blocked; the controller records Failed, Cancelled or Unknown
// for a turn without an accepted report. The progress log also files
// events outside a turn under a status of their own (Edit, Reconciled,
// Steer, Answer). On disk a Status is its plain string.
type Status string

// The statuses an agent may report.
const (
	Continue Status = "continue"
	Complete Status = "complete"
	Blocked  Status = "blocked"
)

// The statuses the controller records for a turn it did not accept a
// report from.
const (
	Failed    Status = "failed"    // the agent failed, or its report was invalid
	Cancelled Status = "cancelled" // the turn was cut short (signal, pause --now, time budget)
	Unknown   Status = "unknown"   // the runner died during the turn
)

// The statuses of progress-log entries that record an event, not a turn.
const (
	Edit       Status = "edit"       // the user changed the goal or the limits
	Reconciled Status = "reconciled" // the feature list differed from the accepted one at start
	Steer      Status = "steer"      // guidance from the user for the next turn
	Answer     Status = "answer"     // the user answered the agent's question
)

// Reported reports whether s is a status an agent may report.
func (s Status) Reported() bool { return s == Continue || s == Complete || s == Blocked }

// Decision is an agent's report at the end of a turn.
type Decision struct {
	Status   Status   `json:"status"`
	Summary  string   `json:"summary"`
	NextStep string   `json:"nextStep,omitempty"`
	Feature  string   `json:"feature,omitempty"`
	Blocker  string   `json:"blocker,omitempty"`
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
}
