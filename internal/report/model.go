package report

import (
	"slices"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// Commit is one turn commit read back from git (gitx.HistoryEntry, in
// neutral form).
type Commit struct {
	Hash      string
	Time      time.Time
	Iteration int
	Feature   string
	Status    string
	Summary   string
	CostUSD   *float64
}

// Input is what a report is made from.
type Input struct {
	State    *harness.State
	Features *featurelist.List    // the list on disk, or the accepted one; nil before one is planned
	Turns    []harness.TurnRecord // the ledger, as read (LatestTurns is applied here)
	Commits  []Commit             // the task's turn commits, oldest first; none with --no-commit or outside git
	Now      time.Time            // when the report is made
}

// Report is one task's report: what the renderers show and --format json
// prints (schemas/report-output.schema.json).
type Report struct {
	Task        string    `json:"task"`
	Goal        string    `json:"goal"`
	Status      string    `json:"status"`
	Phase       string    `json:"phase"`
	StopReason  string    `json:"stopReason,omitempty"`
	Agent       string    `json:"agent"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	GeneratedAt time.Time `json:"generatedAt"`
	Budgets     Budgets   `json:"budgets"`
	Features    Features  `json:"features"`
	Caught      []Count   `json:"caught"`
	// Failed counts the turns that failed without a catch of the
	// referee's: the agent failed (a crash, a model it could not reach)
	// or ran out of time.
	Failed []Count `json:"failed"`
	// Outcomes counts the turns by grub's verdict (harness.Outcomes'
	// order; outcomes no turn had are left out).
	Outcomes []OutcomeCount `json:"outcomes"`
	Turns    []Turn         `json:"turns"`
	// Next are the commands that make sense now the task has stopped
	// (harness.NextSteps); empty while it runs.
	Next []harness.NextStep `json:"next"`
}

// OutcomeCount is how many turns had one outcome.
type OutcomeCount struct {
	Outcome harness.Outcome `json:"outcome"`
	Count   int             `json:"count"`
}

// Budgets is what the task used against its limits; a limit of 0 is none.
type Budgets struct {
	Iterations      Budget      `json:"iterations"`
	Tokens          Budget      `json:"tokens"`
	TimeSeconds     Budget      `json:"timeSeconds"`
	Requests        int64       `json:"requests"`
	TokensEstimated bool        `json:"tokensEstimated,omitempty"`
	CostUSD         *CostBudget `json:"costUSD,omitempty"`
	// CostReported: the backend reported a cost (CostUSD.Used is it);
	// otherwise the views say "not reported".
	CostReported bool `json:"costReported"`
}

// Budget is a count used against a limit (0: no limit).
type Budget struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"`
}

// CostBudget is the reported cost against --cost-budget (0: none).
type CostBudget struct {
	Used  float64 `json:"used"`
	Limit float64 `json:"limit"`
}

// Features is the feature table.
type Features struct {
	Passing int       `json:"passing"`
	Total   int       `json:"total"`
	Items   []Feature `json:"items"`
}

// Feature is one row of the feature table.
type Feature struct {
	ID          string `json:"id"`
	Category    string `json:"category,omitempty"`
	Description string `json:"description"`
	Passes      bool   `json:"passes"`
	Evidence    string `json:"evidence,omitempty"`
	// PassedIn is the turn whose verified flip made it pass (from the
	// ledger); 0 when not known.
	PassedIn int    `json:"passedIn,omitempty"`
	Commit   string `json:"commit,omitempty"`
}

// Count is how many findings of one kind the referee made.
type Count struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Turn is one row of the timeline: a ledger line joined by iteration with
// its commit. A turn known only from git (no ledger line: an older grub,
// or a turn whose line a crash lost) has no usage, progress or checks.
type Turn struct {
	Iteration int       `json:"iteration"`
	Commit    string    `json:"commit,omitempty"`
	Time      time.Time `json:"time"`
	Phase     string    `json:"phase,omitempty"`
	Feature   string    `json:"feature,omitempty"`
	Flipped   string    `json:"flipped,omitempty"`
	// Outcome is grub's verdict (harness.TurnRecord.Outcome; unrecorded
	// for a turn known only from git); Decision is the agent's claim.
	Outcome         harness.Outcome `json:"outcome"`
	Decision        string          `json:"decision,omitempty"`
	Summary         string          `json:"summary"`
	Status          string          `json:"status"`
	DurationSeconds float64         `json:"durationSeconds"`
	Usage           *Usage          `json:"usage,omitempty"`
	Progress        *Progress       `json:"progress,omitempty"`
	Checks          []Check         `json:"checks"`
	// Audit sums up the completion audit's checks when the turn ran it
	// (Checks holds each of them).
	Audit    *Audit    `json:"audit,omitempty"`
	Findings []Finding `json:"findings"`
	// Refused are the hosts the network allowlist refused in the turn.
	Refused  []Refused `json:"refused,omitempty"`
	Recorded bool      `json:"recorded"` // there is a ledger line for the turn
}

// Audit is what the completion audit of one turn checked: how many
// features' verify commands it ran, how many passed, and their time
// added up (they run several at once).
type Audit struct {
	Checks  int     `json:"checks"`
	Passed  int     `json:"passed"`
	Seconds float64 `json:"seconds"`
}

// ShownChecks is Checks as the page and the Markdown list them: the
// completion audit's passing checks are left to the Audit line.
func (t Turn) ShownChecks() []Check {
	if t.Audit == nil {
		return t.Checks
	}
	var out []Check
	for _, c := range t.Checks {
		if c.Name != harness.CheckAudit || c.Result != harness.CheckPassed {
			out = append(out, c)
		}
	}
	return out
}

// Refused is a host the network allowlist refused in a turn, and how
// many times.
type Refused struct {
	Host  string `json:"host"`
	Count int    `json:"count"`
}

// RefusedText is the turn's refused hosts in one line, "example.org ×3,
// evil.example ×1"; empty: none.
func (t Turn) RefusedText() string {
	hosts := make([]harness.RefusedHost, len(t.Refused))
	for i, r := range t.Refused {
		hosts[i] = harness.RefusedHost{Host: r.Host, Count: r.Count}
	}
	return harness.FormatRefused(hosts)
}

// Usage is what one turn used.
type Usage struct {
	InputTokens       int64    `json:"inputTokens"`
	CachedInputTokens int64    `json:"cachedInputTokens"`
	OutputTokens      int64    `json:"outputTokens"`
	Tokens            int64    `json:"tokens"`
	Requests          int64    `json:"requests"`
	Estimated         bool     `json:"estimated,omitempty"`
	CostUSD           *float64 `json:"costUSD,omitempty"`
}

// Progress is the features passing after a turn.
type Progress struct {
	Passing int `json:"passing"`
	Total   int `json:"total"`
}

// Check is one verification grub ran for a turn.
type Check struct {
	Name            string  `json:"name"`
	Feature         string  `json:"feature,omitempty"`
	Result          string  `json:"result"`
	ExitCode        int     `json:"exitCode"`
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
}

// Finding is one thing the referee caught.
type Finding struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// kindOrder is the order kinds are counted and shown in.
var kindOrder = []harness.FindingKind{
	harness.FindingCompletionRejected, harness.FindingIllegalEdit, harness.FindingTampering,
	harness.FindingVerification, harness.FindingPlanRejected, harness.FindingNoDecision,
	harness.FindingTimeout, harness.FindingAgentError, harness.FindingSetup, harness.FindingRegression, harness.FindingOther,
}

// Build makes the report of in.
func Build(in Input) *Report {
	st := in.State
	r := &Report{
		Task: st.ID, Goal: st.Goal, Status: string(st.Status), Phase: string(st.Phase),
		StopReason: st.StopReason, Agent: agentName(st.Agent),
		CreatedAt: st.CreatedAt.UTC(), UpdatedAt: st.UpdatedAt.UTC(), GeneratedAt: in.Now.UTC(),
		Budgets: budgets(st), Caught: []Count{}, Failed: []Count{}, Outcomes: []OutcomeCount{}, Turns: []Turn{},
		Next: harness.NextSteps(st),
	}
	if r.Next == nil {
		r.Next = []harness.NextStep{}
	}
	r.Turns = joinTurns(harness.LatestTurns(in.Turns), in.Commits)
	r.Features = features(in.Features, r.Turns)
	counts, outcomes := map[string]int{}, map[harness.Outcome]int{}
	for _, t := range r.Turns {
		outcomes[t.Outcome]++
		for _, f := range t.Findings {
			counts[f.Kind]++
		}
	}
	for _, k := range kindOrder {
		n := counts[string(k)]
		switch {
		case n == 0:
		case !k.Caught(): // counted in Report.Failed, not Report.Caught
			r.Failed = append(r.Failed, Count{Kind: string(k), Count: n})
		default:
			r.Caught = append(r.Caught, Count{Kind: string(k), Count: n})
		}
	}
	for _, o := range harness.Outcomes {
		if n := outcomes[o]; n > 0 {
			r.Outcomes = append(r.Outcomes, OutcomeCount{Outcome: o, Count: n})
		}
	}
	return r
}

func agentName(a harness.Agent) string {
	if a.Model != "" {
		return string(a.Kind) + " (" + a.Model + ")"
	}
	return string(a.Kind)
}

func budgets(st *harness.State) Budgets {
	b := Budgets{
		Iterations:      Budget{Used: int64(st.CurrentIteration), Limit: int64(st.Limits.MaxIterations)},
		Tokens:          Budget{Used: st.Usage.TokensUsed, Limit: st.Limits.TokenBudget},
		TimeSeconds:     Budget{Used: st.Usage.TimeUsedSeconds, Limit: st.Limits.TimeBudgetSeconds},
		Requests:        st.Usage.Requests,
		TokensEstimated: st.Usage.Estimated,
		CostReported:    st.Usage.CostUSD != nil,
	}
	if st.Usage.CostUSD != nil || st.Limits.CostBudgetUSD > 0 {
		b.CostUSD = &CostBudget{Limit: st.Limits.CostBudgetUSD}
		if st.Usage.CostUSD != nil {
			b.CostUSD.Used = *st.Usage.CostUSD
		}
	}
	return b
}

// joinTurns joins the ledger lines with the commits by iteration; the last
// commit of an iteration wins (a turn recorded again after a crash).
func joinTurns(lines []harness.TurnRecord, commits []Commit) []Turn {
	byIter := map[int]Commit{}
	for _, c := range commits {
		byIter[c.Iteration] = c
	}
	seen := map[int]bool{}
	out := []Turn{}
	for _, l := range lines {
		seen[l.Iteration] = true
		t := fromLedger(l)
		if c, ok := byIter[l.Iteration]; ok {
			t.Commit = c.Hash
		}
		out = append(out, t)
	}
	for _, c := range commits {
		if seen[c.Iteration] {
			continue
		}
		seen[c.Iteration] = true
		c = byIter[c.Iteration]
		t := Turn{Iteration: c.Iteration, Commit: c.Hash, Time: c.Time.UTC(), Feature: c.Feature, Outcome: harness.OutcomeUnrecorded,
			Summary: c.Summary, Status: c.Status, Checks: []Check{}, Findings: []Finding{}}
		if c.CostUSD != nil {
			t.Usage = &Usage{CostUSD: c.CostUSD}
		}
		out = append(out, t)
	}
	sortTurns(out)
	return out
}

func sortTurns(ts []Turn) {
	slices.SortStableFunc(ts, func(a, b Turn) int { return a.Iteration - b.Iteration })
}

func fromLedger(l harness.TurnRecord) Turn {
	t := Turn{
		Iteration: l.Iteration, Time: l.Time.UTC(), Phase: string(l.Phase), Feature: l.Feature, Flipped: l.Flipped, Outcome: l.Outcome(),
		Decision: string(l.Decision), Summary: l.Summary, Status: string(l.Status), DurationSeconds: l.DurationSeconds,
		Usage: &Usage{InputTokens: l.Usage.InputTokens, CachedInputTokens: l.Usage.CachedInputTokens,
			OutputTokens: l.Usage.OutputTokens, Tokens: l.Usage.Tokens(), Requests: l.Usage.Requests,
			Estimated: l.Usage.Estimated, CostUSD: l.Usage.CostUSD},
		Progress: &Progress{Passing: l.Passing, Total: l.Total},
		Checks:   []Check{}, Findings: []Finding{}, Recorded: true,
	}
	for _, c := range l.Checks {
		t.Checks = append(t.Checks, Check{Name: c.Name, Feature: c.Feature, Result: c.Result, ExitCode: c.ExitCode, DurationSeconds: c.DurationSeconds})
		if c.Name == harness.CheckAudit {
			if t.Audit == nil {
				t.Audit = &Audit{}
			}
			t.Audit.Checks++
			t.Audit.Seconds += c.DurationSeconds
			if c.Result == harness.CheckPassed {
				t.Audit.Passed++
			}
		}
	}
	for _, f := range l.Findings {
		t.Findings = append(t.Findings, Finding{Kind: string(f.Kind), Text: f.Text})
	}
	for _, r := range l.Refused {
		t.Refused = append(t.Refused, Refused{Host: r.Host, Count: r.Count})
	}
	return t
}

// features is the feature table, each passing feature with the last turn
// whose verified flip made it pass.
func features(l *featurelist.List, turns []Turn) Features {
	fs := Features{Items: []Feature{}}
	if l == nil {
		return fs
	}
	passedIn := map[string]Turn{}
	for _, t := range turns {
		if t.Flipped != "" {
			passedIn[t.Flipped] = t
		}
	}
	for _, f := range l.Features {
		row := Feature{ID: f.ID, Category: f.Category, Description: f.Description, Passes: f.Passes}
		if f.Evidence != nil {
			row.Evidence = *f.Evidence
		}
		if t, ok := passedIn[f.ID]; ok && f.Passes {
			row.PassedIn, row.Commit = t.Iteration, t.Commit
		}
		fs.Items = append(fs.Items, row)
	}
	fs.Passing, fs.Total = l.Passing(), len(l.Features)
	return fs
}
