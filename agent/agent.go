package agent

import (
	"context"
	"errors"
	"time"
)

// Turn is one unit of work handed to a backend.
type Turn struct {
	TaskID     string
	Iteration  int
	Phase      string // "initializer" or "execution"
	Prompt     string
	Workspace  string // absolute path of the workspace root; the agent's cwd
	HarnessDir string // absolute path of the task's folder, <Workspace>/<TasksDir>/<id>
	PromptFile string // absolute path of a file holding Prompt
	// Timeout bounds the turn: the task's turn timeout, or less when the
	// time budget or the run's slice (--for) ends sooner; 0 means none.
	Timeout time.Duration
	// MaxIterations is the task's iteration cap (Iteration is 1-based);
	// 0 means not given.
	MaxIterations int
	// TimeBudgetLeft is how much of the task's time budget is left as the
	// turn starts; 0 means no time budget.
	TimeBudgetLeft time.Duration
	Locale         string // "en" or "zh": the language of prompts the backend adds
	// TranscriptFile is where a backend that keeps a transcript of the
	// turn appends it; "" means keep none.
	TranscriptFile string
	// SpillDir is the absolute path of the folder where tools write
	// results too large to hand to the model whole.
	SpillDir string
	// TasksDir is the name of the folder under Workspace that holds every
	// task's folder (HarnessDir is one of them); Protected and Skipped
	// name entries of those task folders.
	TasksDir string
	// Protected names the harness files (of any task) the agent's tools
	// must neither read nor write, each with the reason the model is
	// told. A backend whose tools grub confines enforces it.
	Protected map[string]string
	// ReadOnly names the harness files (of any task) the agent's tools may
	// read but must not write, each with the reason the model is told.
	ReadOnly map[string]string
	// Skipped names the folders of a task folder (of any task) that the
	// agent's searches do not enter: the transcripts and spilled outputs,
	// whose copies of earlier tool results would drown real matches.
	Skipped []string
	// TokenBudgetLeft is how many tokens (input - cached input + output) the
	// task may still spend; 0 means no budget. The built-in agent checks it
	// before each model request and, once it is spent, makes one wrap-up
	// request and returns ErrBudgetSpent.
	TokenBudgetLeft int64
	// Started, if set, is called with the process group id of a process the
	// backend starts for the turn, so that the controller can record it in
	// the lock file and end it after a crash.
	Started func(pgid int)
	// Activity, if set, is told what the agent is doing now, in a few words
	// ("shell: go test ./...", "editing main.go", "thinking"), each time
	// that changes, for the progress display. It must not block.
	Activity func(what string)
	// Usage, if set, is told the turn's usage so far after each model
	// request, by a backend that sees it during the turn, for the progress
	// display. It must not block.
	Usage func(so Usage)
}

// Usage is what one turn consumed.
type Usage struct {
	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	// Requests counts model requests where the backend reveals them; 0
	// means it does not say (the figure is then not shown).
	Requests  int64
	Estimated bool // the backend reported no usage and it was estimated
	// CostUSD is what the provider charged for the turn, in US dollars,
	// where the backend reports it (CostReported); 0 otherwise.
	CostUSD      float64
	CostReported bool
}

// Tokens is what the turn counts against a token budget: input - cached
// input + output (the rule Codex uses).
func (u Usage) Tokens() int64 { return u.InputTokens - u.CachedInputTokens + u.OutputTokens }

// Add sums u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + o.InputTokens,
		CachedInputTokens: u.CachedInputTokens + o.CachedInputTokens,
		OutputTokens:      u.OutputTokens + o.OutputTokens,
		Requests:          u.Requests + o.Requests,
		Estimated:         u.Estimated || o.Estimated,
		CostUSD:           u.CostUSD + o.CostUSD,
		CostReported:      u.CostReported || o.CostReported,
	}
}

// Result is what a backend returns for a turn.
type Result struct {
	FinalMessage string
	Usage        Usage
	Transcript   string // path of the turn's transcript, if the backend wrote one
	// OutputCut is how many bytes of the agent's output the backend dropped
	// (from the middle: the start and the end are kept), so that a turn
	// whose decision cannot be found can say the output was cut.
	OutputCut int64
}

// Agent runs turns.
type Agent interface {
	RunTurn(ctx context.Context, t Turn) (Result, error)
}

// ErrTimeout is returned (wrapped) when a turn exceeds its timeout. The
// backend has killed what it started.
var ErrTimeout = errors.New("turn timed out")

// ErrUsageLimited is returned (wrapped) when the provider refuses for quota
// after retries; the task ends usage_limited.
var ErrUsageLimited = errors.New("provider usage limit reached")

// ErrBudgetSpent is returned (wrapped) by a backend that stopped a turn
// because the token budget was spent; the result still carries usage and
// any wrap-up message.
var ErrBudgetSpent = errors.New("token budget spent")

// SetupError is a failure that retrying cannot change: the provider
// refused the key (401, 403), does not know the model or the URL (404),
// cannot be reached at all, or the agent program does not run. The run
// stops at once, the task left paused: the task is fine, the setup is not.
type SetupError struct {
	Cause string // what went wrong, in full
	Fix   string // what the user should change
}

func (e *SetupError) Error() string {
	if e.Fix == "" {
		return e.Cause
	}
	return e.Cause + "; " + e.Fix
}

// CheckTimeout bounds Checker.Check.
const CheckTimeout = 10 * time.Second

// Checker is an Agent that can check, before a run's first turn and
// without spending one, that it can work at all: the built-in agent asks
// the server for its models, claude and codex print their version, a
// command's program is looked up. Check returns what it found, in a few
// words, for the progress line; an error that is a *SetupError stops the
// run, any other is only said.
type Checker interface {
	Check(ctx context.Context) (found string, err error)
}
