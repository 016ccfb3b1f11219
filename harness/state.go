package harness

import (
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/loopstate"
)

// Status is a task's lifecycle status.
type Status string

const (
	StatusRunning       Status = "running"
	StatusPaused        Status = "paused"
	StatusBlocked       Status = "blocked"
	StatusBudgetLimited Status = "budget_limited"
	StatusUsageLimited  Status = "usage_limited"
	StatusComplete      Status = "complete"
	StatusStopped       Status = "stopped"
	StatusFailed        Status = "failed"
)

// Phase is the kind of turn a task runs next.
type Phase string

const (
	PhaseInitializer Phase = "initializer"
	PhaseExecution   Phase = "execution"
)

// The stop reasons of a pause or stop the user asked for, the same whether
// the task was idle (grub changed state.json directly) or running (its
// controller applied the request).
const (
	ReasonPausedByUser  = "paused by user"
	ReasonStoppedByUser = "stopped by user"
	// ReasonSliceEnded starts the stop reason of a run whose time slice
	// (grub resume --for) ended: the task is paused for the next run,
	// here or on another machine, to continue.
	ReasonSliceEnded = "the time slice of this run ended"
)

// StateVersion is the state.json format version this build writes.
const StateVersion = 1

// State is the content of state.json. Only the controller writes it.
type State struct {
	Version             int        `json:"version"`
	ID                  string     `json:"id"`
	Goal                string     `json:"goal"`
	Locale              string     `json:"locale"`
	Status              Status     `json:"status"`
	Phase               Phase      `json:"phase"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
	CurrentIteration    int        `json:"currentIteration"`
	AwaitingTurn        bool       `json:"awaitingTurn"`
	TurnStartedAt       *time.Time `json:"turnStartedAt,omitempty"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	ConsecutiveBlocked  int        `json:"consecutiveBlocked"`
	NoProgressTurns     int        `json:"noProgressTurns"`
	Limits              Limits     `json:"limits"`
	Usage               Usage      `json:"usage"`
	Agent               Agent      `json:"agent"`
	// NoCommit turns off the commit after every turn (grub start --no-commit).
	NoCommit bool `json:"noCommit,omitempty"`
	// Sandbox is how the commands run for the agent are confined; absent
	// (zero) in files written before it existed, which means the default.
	Sandbox Sandbox `json:"sandbox,omitzero"`
	// RecordPending is the record of turn CurrentIteration, decided and
	// saved before any of it is written; the run that finds it set
	// finishes it (see PendingRecord).
	RecordPending *PendingRecord `json:"recordPending,omitempty"`
	// Hooks are the user's commands run after each turn and when the task
	// stops; absent (zero) in files written before them.
	Hooks Hooks `json:"hooks,omitzero"`
	// History is where the task's history stands in git: its branch and
	// grub's last turn commit (history.go); nil before the task's first
	// run with a repository, and in files written before it.
	History *HistoryMark `json:"history,omitempty"`
	// FeatureListBaseline is the last feature list the controller
	// accepted. It is kept in files of its own, which AcceptedList names
	// (see accepted.go); state files written before those held it here,
	// and are read as they are.
	FeatureListBaseline *featurelist.List `json:"featureListBaseline,omitempty"`
	// AcceptedList names the files that hold FeatureListBaseline; nil
	// when no list is accepted yet.
	AcceptedList *AcceptedList `json:"acceptedList,omitempty"`
	LastDecision *Decision     `json:"lastDecision"`
	LastError    string        `json:"lastError,omitempty"`
	StopReason   string        `json:"stopReason,omitempty"`
	LastInit     *Check        `json:"lastInit"`
	Pending      Pending       `json:"pending"`
	// LastChecked is, for each feature grub has run the check of (a
	// verified flip, the regression sweep, the completion audit), the
	// iteration of its last run: the sweep takes the least recently
	// checked first. Absent in files written before it (none checked).
	LastChecked map[string]int `json:"lastChecked,omitempty"`
}

// Limits are the budgets and caps of a task. Durations are whole seconds.
type Limits struct {
	MaxIterations          int   `json:"maxIterations"`
	MaxConsecutiveFailures int   `json:"maxConsecutiveFailures"`
	MaxInitializerFailures int   `json:"maxInitializerFailures"`
	MaxBlocked             int   `json:"maxBlocked"`
	TokenBudget            int64 `json:"tokenBudget"`
	TimeBudgetSeconds      int64 `json:"timeBudgetSeconds"`
	MinFeatures            int   `json:"minFeatures"`
	MaxFeatures            int   `json:"maxFeatures"`
	TurnTimeoutSeconds     int64 `json:"turnTimeoutSeconds"`
	InitTimeoutSeconds     int64 `json:"initTimeoutSeconds"`
	// CostBudgetUSD is what the task may spend, in US dollars, as the
	// backend reports it (0 = no budget; absent in older files).
	CostBudgetUSD float64 `json:"costBudgetUSD,omitempty"`
	// RegressionChecks is how many passing features' checks grub runs
	// again after each execution turn, least recently checked first (0:
	// none). A state file written before it has none: it loads as
	// DefaultRegressionChecks (see decodeState).
	RegressionChecks int `json:"regressionChecks"`
	// Protect are the --protect globs: a workspace file matching one that
	// exists when a turn starts may not be changed by the turn
	// (controller/protect.go). Absent when none.
	Protect []string `json:"protect,omitempty"`
}

// DefaultRegressionChecks is the regression sweep's size unless
// --regression-checks sets it.
const DefaultRegressionChecks = 3

// DefaultLimits are the limits a new task gets unless its flags change them.
func DefaultLimits() Limits {
	return Limits{
		MaxIterations:          25,
		MaxConsecutiveFailures: 3,
		MaxInitializerFailures: 5,
		MaxBlocked:             3,
		MinFeatures:            15,
		MaxFeatures:            40,
		TurnTimeoutSeconds:     30 * 60,
		InitTimeoutSeconds:     5 * 60,
		RegressionChecks:       DefaultRegressionChecks,
	}
}

// LimitChanges raises or lowers some limits of an existing task (grub edit,
// grub resume). A nil field leaves the limit as it is.
type LimitChanges struct {
	MaxIterations          *int     `json:"maxIterations,omitempty"`
	MaxConsecutiveFailures *int     `json:"maxConsecutiveFailures,omitempty"`
	MaxInitializerFailures *int     `json:"maxInitializerFailures,omitempty"`
	MaxBlocked             *int     `json:"maxBlocked,omitempty"`
	TokenBudget            *int64   `json:"tokenBudget,omitempty"`
	TimeBudgetSeconds      *int64   `json:"timeBudgetSeconds,omitempty"`
	TurnTimeoutSeconds     *int64   `json:"turnTimeoutSeconds,omitempty"`
	InitTimeoutSeconds     *int64   `json:"initTimeoutSeconds,omitempty"`
	CostBudgetUSD          *float64 `json:"costBudgetUSD,omitempty"`
	RegressionChecks       *int     `json:"regressionChecks,omitempty"`
	// Protect replaces the protected globs; an empty list clears them.
	Protect *[]string `json:"protect,omitempty"`
}

// Empty reports whether c changes nothing.
func (c LimitChanges) Empty() bool {
	return c.MaxIterations == nil && c.MaxConsecutiveFailures == nil && c.MaxInitializerFailures == nil &&
		c.MaxBlocked == nil && c.TokenBudget == nil && c.TimeBudgetSeconds == nil &&
		c.TurnTimeoutSeconds == nil && c.InitTimeoutSeconds == nil && c.CostBudgetUSD == nil &&
		c.RegressionChecks == nil && c.Protect == nil
}

// Apply writes the changes into l.
func (c LimitChanges) Apply(l *Limits) {
	if c.MaxIterations != nil {
		l.MaxIterations = *c.MaxIterations
	}
	if c.MaxConsecutiveFailures != nil {
		l.MaxConsecutiveFailures = *c.MaxConsecutiveFailures
	}
	if c.TokenBudget != nil {
		l.TokenBudget = *c.TokenBudget
	}
	if c.TimeBudgetSeconds != nil {
		l.TimeBudgetSeconds = *c.TimeBudgetSeconds
	}
	if c.MaxInitializerFailures != nil {
		l.MaxInitializerFailures = *c.MaxInitializerFailures
	}
	if c.MaxBlocked != nil {
		l.MaxBlocked = *c.MaxBlocked
	}
	if c.TurnTimeoutSeconds != nil {
		l.TurnTimeoutSeconds = *c.TurnTimeoutSeconds
	}
	if c.InitTimeoutSeconds != nil {
		l.InitTimeoutSeconds = *c.InitTimeoutSeconds
	}
	if c.CostBudgetUSD != nil {
		l.CostBudgetUSD = *c.CostBudgetUSD
	}
	if c.RegressionChecks != nil {
		l.RegressionChecks = *c.RegressionChecks
	}
	if c.Protect != nil {
		l.Protect = slices.Clone(*c.Protect)
		if len(l.Protect) == 0 {
			l.Protect = nil
		}
	}
}

// SameLimits reports whether a and b are the same limits.
func SameLimits(a, b Limits) bool {
	p, q := a.Protect, b.Protect
	a.Protect, b.Protect = nil, nil
	return reflect.DeepEqual(a, b) && slices.Equal(p, q)
}

// Usage is what a task has consumed so far.
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	Requests          int64 `json:"requests"`
	// TokensUsed = input - cached input + output, summed over every request.
	TokensUsed      int64 `json:"tokensUsed"`
	TimeUsedSeconds int64 `json:"timeUsedSeconds"`
	// Estimated is set once any request's usage had to be estimated because
	// the server reported none.
	Estimated bool `json:"estimated,omitempty"`
	// CostUSD is what the provider charged, in US dollars, summed over the
	// turns whose backend reported a cost; nil (absent) while none has.
	CostUSD *float64 `json:"costUSD,omitempty"`
}

// AddCost adds a turn's reported cost to the total, rounded to a
// billionth of a dollar so that sums of decimal prices stay exact.
func (u *Usage) AddCost(usd float64) {
	sum := usd
	if u.CostUSD != nil {
		sum += *u.CostUSD
	}
	sum = math.Round(sum*1e9) / 1e9
	u.CostUSD = &sum
}

// AgentKind names a backend.
type AgentKind string

// The backends.
const (
	AgentOpenAI  AgentKind = "openai"  // the built-in agent on any OpenAI-compatible server
	AgentClaude  AgentKind = "claude"  // Claude Code
	AgentCodex   AgentKind = "codex"   // the Codex CLI
	AgentCommand AgentKind = "command" // any program (--agent-cmd)
)

// Agent records which backend runs the turns. It never holds a key.
type Agent struct {
	Kind    AgentKind `json:"kind"`
	Model   string    `json:"model,omitempty"`
	BaseURL string    `json:"baseURL,omitempty"`
	Command string    `json:"command,omitempty"`
	// Bin is the program of the claude or codex backend ("" = on PATH).
	Bin string `json:"bin,omitempty"`
	// MaxRequests caps the built-in agent's model requests per turn (0: default).
	MaxRequests int `json:"maxRequests,omitempty"`
	// ContextWindow is the model's context size in tokens (0: default).
	ContextWindow int `json:"contextWindow,omitempty"`
	// RequestTimeoutSeconds bounds one attempt of one model request (0: default).
	RequestTimeoutSeconds int64 `json:"requestTimeoutSeconds,omitempty"`
	// Args are extra arguments appended to the claude or codex command
	// line (--agent-args, split like a shell word list).
	Args []string `json:"args,omitempty"`
	// StallTimeoutSeconds is how long the claude or codex program may go
	// on reporting errors without progress before the turn fails (0:
	// the backend's default).
	StallTimeoutSeconds int64 `json:"stallTimeoutSeconds,omitempty"`
}

// SameAgent reports whether a and b are the same settings.
func SameAgent(a, b Agent) bool {
	if !slices.Equal(a.Args, b.Args) {
		return false
	}
	a.Args, b.Args = nil, nil
	return reflect.DeepEqual(a, b)
}

// Sandbox records the sandbox settings a task asked for (grub start
// --sandbox, --sandbox-allow, --no-network, --allow-domain, --pass-env,
// --sandbox-allow-git, --sandbox-hide, --sandbox-show). They are
// resolved against the kernel at every run, so an empty Mode (the
// default) can mean workspace-write on one machine and off on another.
type Sandbox struct {
	// Mode is "workspace-write", "read-only" or "off"; empty means the
	// default for the task's agent where grub runs.
	Mode string `json:"mode,omitempty"`
	// ModeFrom says where Mode was set, for status: "--sandbox", or a
	// defaults file and line (".grub/config.toml:3"); empty: --sandbox.
	ModeFrom string `json:"modeFrom,omitempty"`
	// Allow lists extra paths writable in workspace-write mode: relative
	// to the workspace when inside it (so that the task runs the same in
	// another clone), absolute outside it (Store.ResolvePath).
	Allow []string `json:"allow,omitempty"`
	// NoNetwork refuses TCP connect and bind from sandboxed commands.
	NoNetwork bool `json:"noNetwork,omitempty"`
	// AllowDomains is the network allowlist (--allow-domain), as given:
	// sandboxed commands connect only to grub's proxy, which lets these
	// hosts through. Empty: no allowlist.
	AllowDomains []string `json:"allowDomains,omitempty"`
	// PassEnv names secret-looking variables the shell tool, init.sh and
	// verify commands still get.
	PassEnv []string `json:"passEnv,omitempty"`
	// AllowGit lets sandboxed commands write the git directory
	// (--sandbox-allow-git), so that the agent can commit; its hooks,
	// config and the other files git takes programs or other folders from
	// stay read-only. By default the whole git directory is read-only.
	AllowGit bool `json:"allowGit,omitempty"`
	// Hide lists paths sandboxed commands may not read beyond the
	// credential locations grub hides by default (--sandbox-hide), and
	// Show those of them let through (--sandbox-show); stored as Allow
	// is.
	Hide []string `json:"hide,omitempty"`
	Show []string `json:"show,omitempty"`
}

// Decision is the controller's record of a turn's outcome: the agent's
// loop-state as accepted (or downgraded), or a status the controller set
// (loopstate.Unknown, Failed, Cancelled), with the turn it belongs to. Its
// JSON is the loop-state's fields followed by "iteration".
type Decision struct {
	loopstate.Decision
	Iteration int `json:"iteration,omitempty"`
}

// NewDecision is a decision with the given status and summary.
func NewDecision(status loopstate.Status, summary string) Decision {
	return Decision{Decision: loopstate.Decision{Status: status, Summary: summary}}
}

// PendingRecord is a turn's record as the controller decided it, saved in
// state before the progress-log entry, the checklist and the commit are
// written, so that a crash in between is finished, not guessed: each step
// is done again only if it is missing (the entry is not in the log, the
// turn has no commit on HEAD). It stays set until the next write of state.
type PendingRecord struct {
	Iteration int    `json:"iteration"`
	Entry     string `json:"entry"` // the progress-log entry, rendered
	Feature   string `json:"feature,omitempty"`
	Summary   string `json:"summary,omitempty"`
	// Ledger is the turn's line of turns.jsonl (checked against its own
	// schema when it is appended).
	Ledger *TurnRecord `json:"ledger,omitempty"`
	// CostUSD is the turn's reported cost, for the commit's Grub-Cost
	// trailer (CostReported says whether there is one).
	CostUSD      float64 `json:"costUSD,omitempty"`
	CostReported bool    `json:"costReported,omitempty"`
}

// Check is the result of a command the controller ran (init.sh, verify).
type Check struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exitCode"`
	Passed     bool   `json:"passed"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	OutputTail string `json:"outputTail,omitempty"`
	Iteration  int    `json:"iteration,omitempty"`
	// Duration is how long the command ran, for the ledger; state.json
	// does not keep it.
	Duration time.Duration `json:"-"`
}

// Pending holds notes the next prompt carries exactly once.
type Pending struct {
	Failure              string `json:"failure,omitempty"`
	RecoveredUnknownTurn bool   `json:"recoveredUnknownTurn,omitempty"`
	CompletionRejected   string `json:"completionRejected,omitempty"`
	// AuditRegression is what the completion audit set back: a finding of
	// the task, not a failure of the turn that ran it.
	AuditRegression  string      `json:"auditRegression,omitempty"`
	BlockedReexamine string      `json:"blockedReexamine,omitempty"`
	ObjectiveUpdated *GoalChange `json:"objectiveUpdated,omitempty"`
	Steer            []string    `json:"steer,omitempty"`
	Answer           string      `json:"answer,omitempty"`
	AnswerTo         string      `json:"answerTo,omitempty"` // the question Answer answers
	// AnswerOptions are the options the question offered; AnswerChoice is
	// the one Answer picks (1-based), 0 when Answer is free text.
	AnswerOptions []string `json:"answerOptions,omitempty"`
	AnswerChoice  int      `json:"answerChoice,omitempty"`
}

// GoalChange records an edit of the goal.
type GoalChange struct {
	Old string `json:"old"`
	New string `json:"new"`
}
