package loopstate

// The statuses an agent may report.
const (
	Continue = "continue"
	Complete = "complete"
	Blocked  = "blocked"
)

// Decision is an agent's report at the end of a turn.
type Decision struct {
	Status   string   `json:"status"`
	Summary  string   `json:"summary"`
	NextStep string   `json:"nextStep,omitempty"`
	Feature  string   `json:"feature,omitempty"`
	Blocker  string   `json:"blocker,omitempty"`
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`
}
