// Package events is the typed model of what a run of grub reports while
// it works: the run's start, each turn's start, what the agent does, the
// referee's findings and checks, the turn's end, a question for the user
// and the run's stop. The controller emits them to its observers
// (controller.Progress): internal/cli's live line draws from them, and
// `grub start --json` (resume, answer) writes each as one line of JSON on
// stdout, checked against schemas/events.schema.json.
//
// It is a leaf: it imports only the standard library, so that any part of
// grub (an MCP server's progress notifications, a detached runner's log)
// can read and write the same events.
package events

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Version is the version of the events' shape; a change that a reader
// written for an earlier version could misread raises it.
const Version = 1

// Type names what an event reports.
type Type string

// The types of events, in the order a run emits them.
const (
	// RunStarted: a runner took the task's lock and loaded its state.
	RunStarted Type = "run.started"
	// TurnStarted: the turn's prompt is written and the agent is about to
	// run.
	TurnStarted Type = "turn.started"
	// Activity: what the agent is doing now, and its usage so far, as the
	// live line shows it; once per change.
	Activity Type = "turn.activity"
	// AgentDone: the agent's part of the turn is over; the referee checks
	// what it did.
	AgentDone Type = "turn.agent_done"
	// Finding: one thing the referee caught, or failed the turn for.
	Finding Type = "turn.finding"
	// Check: one command grub ran to check the turn (init.sh, a feature's
	// verify command, a recheck or the completion audit).
	Check Type = "turn.check"
	// TurnEnded: the turn is recorded (its progress-log entry, its line of
	// turns.jsonl, its commit).
	TurnEnded Type = "turn.ended"
	// Question: the agent asked the user a question; the task stops
	// blocked until grub answer.
	Question Type = "question"
	// Stopped: the run is over; always the last event of a run.
	Stopped Type = "run.stopped"
)

// Types are every event type, in the order a run emits them.
var Types = []Type{RunStarted, TurnStarted, Activity, AgentDone, Finding, Check, TurnEnded, Question, Stopped}

// Event is one event. Version, Type, Time and Iteration are always set
// (TaskID whenever the task is known: a run.stopped of a command that
// failed before it chose a task has none); exactly one of the other
// fields, the one named after the type, holds its data.
type Event struct {
	Version int    `json:"version"`
	Type    Type   `json:"type"`
	TaskID  string `json:"taskId,omitempty"`
	// Time is when the event happened, on the run's clock.
	Time time.Time `json:"time"`
	// Iteration is the turn's number; outside a turn, the number of the
	// last turn (0 before the first).
	Iteration int `json:"iteration"`

	Run      *Run    `json:"run,omitempty"`
	Turn     *Turn   `json:"turn,omitempty"`
	Activity *Doing  `json:"activity,omitempty"`
	Agent    *Agent  `json:"agent,omitempty"`
	Finding  *Caught `json:"finding,omitempty"`
	Check    *Ran    `json:"check,omitempty"`
	Ended    *Ended  `json:"ended,omitempty"`
	Question *Asked  `json:"question,omitempty"`
	Stopped  *Stop   `json:"stopped,omitempty"`
}

// New is an event of type t with the common fields set and the version.
func New(t Type, taskID string, at time.Time, iteration int) Event {
	return Event{Version: Version, Type: t, TaskID: taskID, Time: at.UTC(), Iteration: iteration}
}

// Run is a run.started event's data.
type Run struct {
	Phase         string `json:"phase"`
	Status        string `json:"status"` // the task's status as the run found it
	MaxIterations int    `json:"maxIterations"`
	Agent         string `json:"agent"` // the backend: openai, claude, codex, command
	Dir           string `json:"dir"`   // the task's harness folder, absolute
}

// Turn is a turn.started event's data, with the task's totals before the
// turn: Time is the turn's start.
type Turn struct {
	MaxIterations int    `json:"maxIterations"`
	Phase         string `json:"phase"`
	Feature       string `json:"feature,omitempty"` // the feature the prompt proposes; none in the initializer
	// TokensUsed and CostUSD are the task's totals before the turn
	// (CostUSD nil while no backend reported a cost); TokenBudget and
	// CostBudgetUSD the budgets (0: none).
	TokensUsed    int64    `json:"tokensUsed"`
	TokenBudget   int64    `json:"tokenBudget"`
	CostUSD       *float64 `json:"costUSD,omitempty"`
	CostBudgetUSD float64  `json:"costBudgetUSD"`
}

// Doing is a turn.activity event's data: what the agent does now, in its
// backend's few words (a tool call: "shell: go test ./..."), and the
// turn's usage so far. Text is empty while the agent said nothing yet
// (an event that only brings new usage).
type Doing struct {
	Text   string `json:"text,omitempty"`
	Tokens int64  `json:"tokens"` // counted against a token budget, this turn so far
	// CostUSD is the turn's cost so far, when the backend reports one.
	CostUSD *float64 `json:"costUSD,omitempty"`
}

// Agent is a turn.agent_done event's data.
type Agent struct {
	DurationSeconds float64 `json:"durationSeconds"`
}

// Caught is a turn.finding event's data: a finding of the turn's line of
// turns.jsonl. Caught says whether it is a catch of the referee's
// (harness.FindingKind.Caught), not a turn that failed before there was
// anything to referee (a timeout, an agent error).
type Caught struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Caught bool   `json:"caught"`
}

// Ran is a turn.check event's data: a check of the turn's line of
// turns.jsonl.
type Ran struct {
	Name            string  `json:"name"`
	Feature         string  `json:"feature,omitempty"`
	Command         string  `json:"command,omitempty"`
	Result          string  `json:"result"`
	ExitCode        int     `json:"exitCode"`
	DurationSeconds float64 `json:"durationSeconds"`
}

// OutcomeFailed is one of a turn's outcomes (Ended.Outcome): grub's
// verdict on the turn, decided in one place, harness.TurnRecord.Outcome,
// and named as every view names it (accepted, claim_rejected,
// regression_found, rejected, failed, cancelled, unknown; the schema's
// list, which controller's tests hold to harness.Outcomes).
const OutcomeFailed = "failed"

// Ended is a turn.ended event's data: the turn's line of turns.jsonl
// as the ledger records it, with the outcome and the task's totals after
// the turn.
type Ended struct {
	Phase    string `json:"phase"`
	Feature  string `json:"feature,omitempty"`
	Flipped  string `json:"flipped,omitempty"` // the feature whose flip grub verified and accepted
	Decision string `json:"decision"`
	Summary  string `json:"summary"`
	Outcome  string `json:"outcome"`
	Findings int    `json:"findings"` // how many turn.finding events came before
	Usage    Usage  `json:"usage"`
	// DurationSeconds is how long the agent ran.
	DurationSeconds float64 `json:"durationSeconds"`
	Passing         int     `json:"passing"`
	Total           int     `json:"total"`
	Status          string  `json:"status"` // the task's status after the turn
	StopReason      string  `json:"stopReason,omitempty"`
	// TokensUsed and CostUSD are the task's totals after the turn.
	TokensUsed int64    `json:"tokensUsed"`
	CostUSD    *float64 `json:"costUSD,omitempty"`
}

// Usage is what one turn used.
type Usage struct {
	InputTokens       int64    `json:"inputTokens"`
	CachedInputTokens int64    `json:"cachedInputTokens"`
	OutputTokens      int64    `json:"outputTokens"`
	Requests          int64    `json:"requests"`
	Estimated         bool     `json:"estimated,omitempty"`
	CostUSD           *float64 `json:"costUSD,omitempty"`
}

// Asked is a question event's data.
type Asked struct {
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
}

// Stop is a run.stopped event's data. Status and Reason are the task's
// when the run knows its task (a command that failed before it has none);
// ExitCode is grub's exit code for the run, Error the message it printed
// (none when the task simply stopped). Task is the task's status as
// `grub status --json` prints it (schemas/status-output.schema.json),
// when the run got that far.
type Stop struct {
	Status   string          `json:"status,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	ExitCode int             `json:"exitCode"`
	Error    string          `json:"error,omitempty"`
	Task     json.RawMessage `json:"task,omitempty"`
}

// TextLimit is the most bytes of outside text (a finding's, a summary, a
// question) an event carries: events stay small, and turns.jsonl and the
// progress log keep the whole text.
const TextLimit = 2000

// Clip cuts s to TextLimit bytes on a rune boundary, marked with "…".
func Clip(s string) string {
	if len(s) <= TextLimit {
		return s
	}
	s = s[:TextLimit]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
