package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
	"github.com/spf13/cobra"
)

// StatusOptions are the inputs of grub status.
type StatusOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time
	// Landlock probes the kernel, for the sandbox line; Getenv reads the
	// environment (Factory.Getenv).
	Landlock func() (int, bool)
	Getenv   func(string) string

	ID         string
	JSON       bool
	ExitStatus bool

	// Watch is --watch: show the status every Interval until no
	// controller runs the task.
	Watch    bool
	Interval time.Duration
	// Ctx ends a watch when done (Ctrl-C also ends it).
	Ctx context.Context
	// Sleep waits between frames of a watch; tests replace it so that they
	// do not wait for real intervals.
	Sleep func(ctx context.Context, d time.Duration) error
}

// NewCmdStatus builds grub status. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdStatus(f *Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO, Store: f.Store, Now: f.Now, Sleep: sleepCtx, Landlock: f.Landlock, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "status [<id>] [--watch]",
		Short: "Show a task's status, progress and budgets",
		Long: `Show where a task stands: its goal, status and phase, the iteration count
against its limit, how many features pass, tokens and time used against the
budgets, the last turn's decision, the last error and why it stopped.

Without <id>, the most recently updated task is shown.

A task whose status is "running" but whose lock no controller holds lost its
runner (a crash, a closed terminal); status says so, and grub resume picks it
up again.

--json prints one JSON object on stdout that follows
schemas/status-output.schema.json; the format is stable. When status fails
(no such task, a damaged harness), --json prints {"error": "…", "exitCode":
N} on stdout instead (schemas/error-output.schema.json), and the message
on stderr as usual.

--exit-status makes the exit code that of the task's status, for CI gates:
  0  complete          3  blocked                     5  paused or stopped
  1  failed            4  budget_limited/usage_limited
  75 running, and a controller is running it now
  1  running, but its runner died (run grub resume)
Without --exit-status, status exits 0 whenever it could show the task.

--watch follows a running task from another terminal: it shows the status
again every --interval (default 2s) until the task stops running and its
runner has exited (so the last turn's commit is there), then exits as plain
status would, --exit-status included. On a terminal the screen is redrawn
each time; when stdout is a file or a pipe, the status is printed only when
the task changed, separated by a blank line. With --json each change is one
JSON object on its own line (NDJSON), each following
schemas/status-output.schema.json. Ctrl-C ends the watch and leaves the
task running: exit 0, or 130 with --exit-status (there is no final status
to report yet).`,
		Example: `  grub status
  grub status 0a1b2c3d
  grub status --json | jq .features
  grub status --exit-status >/dev/null || echo "not complete: exit $?"
  grub status --watch                        # follow the run until it stops
  grub status --watch --json | jq -c '{status, iteration, features}'
  grub status --watch --exit-status --interval 30s && echo done`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.ID = args[0]
			}
			opts.Ctx = cmd.Context()
			if cmd.Flags().Changed("interval") {
				switch {
				case !opts.Watch:
					return jsonError(opts.IO.Out, opts.JSON, usageErrorf("--interval %s: only --watch takes an interval; add --watch", opts.Interval))
				case opts.Interval < minWatchInterval:
					return jsonError(opts.IO.Out, opts.JSON, usageErrorf("--interval %s: must be at least %s, e.g. 2s", opts.Interval, minWatchInterval))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return jsonError(opts.IO.Out, opts.JSON, statusRun(opts))
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object (schemas/status-output.schema.json); with --watch, one per line")
	cmd.Flags().BoolVar(&opts.ExitStatus, "exit-status", false, "exit with the code of the task's status (see above)")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "show the status again every --interval until the task stops running")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 2*time.Second, "with --watch: how often to look at the task, e.g. 2s or 1m")
	return cmd
}

func statusRun(opts *StatusOptions) error {
	if opts.Watch {
		store, id, err := openTask(opts.Store, opts.ID)
		if err != nil {
			return err
		}
		return watchStatus(opts, store, id)
	}
	store, st, damaged, err := loadTaskDamaged(opts.Store, opts.ID)
	noteBareID(opts.IO.ErrOut, opts.Store, opts.ID)
	if err != nil {
		return err
	}
	warnDamaged(opts.IO.ErrOut, damaged)
	v, err := loadTaskView(store, st)
	if err != nil {
		return err
	}
	v.Sandbox = newSandboxView(st, store.Root, opts.Getenv, opts.Landlock)
	if tr, err := store.TaskTrusted(st); err == nil && tr != harness.Trusted {
		v.TrustChanged = tr == harness.Changed
		for _, s := range store.TaskTrustSettings(st) {
			if !slices.Contains(v.Untrusted, s.Key) {
				v.Untrusted = append(v.Untrusted, s.Key)
			}
		}
	}
	if home, err := opts.Store(); err == nil {
		locateView(v, home, store)
	}
	if opts.JSON {
		err = writeJSON(opts.IO.Out, schemas.StatusOutput, newStatusOutput(v))
	} else {
		if v.FeatureNote != "" {
			fmt.Fprintf(opts.IO.ErrOut, "grub: warning: %s\n", v.FeatureNote)
		}
		err = printStatus(opts.IO.Out, v, opts.Now())
	}
	if err != nil {
		return err
	}
	if opts.ExitStatus {
		if code := statusExitCode(v); code != ExitOK {
			return &ExitError{Code: code}
		}
	}
	return nil
}

// statusExitCode is the exit code of status --exit-status: the code of the
// task's status, except that a running task whose runner died exits 1.
func statusExitCode(v *taskView) int {
	if v.Interrupted() {
		return ExitFailed
	}
	return ExitCodeForStatus(v.State.Status)
}

// statusOutput is grub status --json (schemas/status-output.schema.json).
type statusOutput struct {
	ID                  string              `json:"id"`
	Goal                string              `json:"goal"`
	Status              harness.Status      `json:"status"`
	Phase               harness.Phase       `json:"phase"`
	Running             bool                `json:"running"`
	Interrupted         bool                `json:"interrupted"`
	Runner              *runnerOutput       `json:"runner,omitempty"`
	Iteration           int                 `json:"iteration"`
	MaxIterations       int                 `json:"maxIterations"`
	ConsecutiveFailures int                 `json:"consecutiveFailures"`
	Features            featuresOutput      `json:"features"`
	Usage               harness.Usage       `json:"usage"`
	Limits              harness.Limits      `json:"limits"`
	Agent               harness.Agent       `json:"agent"`
	Sandbox             sandboxView         `json:"sandbox"`
	Untrusted           []string            `json:"untrusted,omitempty"`
	TrustChanged        bool                `json:"trustChanged,omitempty"`
	LastDecision        *harness.Decision   `json:"lastDecision"`
	LastTurn            *harness.TurnRecord `json:"lastTurn,omitempty"`
	// LastOutcome is grub's verdict on LastTurn (TurnRecord.Outcome).
	LastOutcome harness.Outcome `json:"lastOutcome,omitempty"`
	// Next are the commands that make sense now that the task has
	// stopped (harness.NextSteps).
	Next       []harness.NextStep `json:"next,omitempty"`
	LastError  string             `json:"lastError,omitempty"`
	StopReason string             `json:"stopReason,omitempty"`
	Harness    string             `json:"harness"`
	Worktree   string             `json:"worktree,omitempty"`
	Branch     string             `json:"branch,omitempty"`
	Base       *harness.GitBase   `json:"base,omitempty"`
	OtherHost  string             `json:"otherHost,omitempty"`
	CreatedAt  time.Time          `json:"createdAt"`
	UpdatedAt  time.Time          `json:"updatedAt"`
}

func newStatusOutput(v *taskView) *statusOutput {
	st := v.State
	out := &statusOutput{
		ID:                  st.ID,
		Goal:                st.Goal,
		Status:              st.Status,
		Phase:               st.Phase,
		Running:             v.Held,
		Interrupted:         v.Interrupted(),
		Iteration:           st.CurrentIteration,
		MaxIterations:       st.Limits.MaxIterations,
		ConsecutiveFailures: st.ConsecutiveFailures,
		Features:            featuresOutput{Passing: v.Passing(), Total: v.Total()},
		Usage:               st.Usage,
		Limits:              st.Limits,
		Agent:               st.Agent,
		Sandbox:             v.Sandbox,
		Untrusted:           v.Untrusted,
		TrustChanged:        v.TrustChanged,
		LastDecision:        st.LastDecision,
		LastTurn:            v.LastTurn,
		LastError:           st.LastError,
		StopReason:          st.StopReason,
		Harness:             v.Dir,
		Worktree:            v.Worktree,
		Branch:              v.Branch,
		Base:                st.Base,
		OtherHost:           v.OtherHost,
		CreatedAt:           st.CreatedAt,
		UpdatedAt:           st.UpdatedAt,
	}
	if v.Held {
		out.Runner = &runnerOutput{PID: v.Holder.PID, Host: v.Holder.Host, StartedAt: v.Holder.StartedAt}
	}
	if v.LastTurn != nil {
		out.LastOutcome = v.LastTurn.Outcome()
	}
	out.Next = harness.NextSteps(st)
	return out
}

// printStatus writes the status of a task for people.
func printStatus(w io.Writer, v *taskView, now time.Time) error {
	st := v.State
	fw := &fieldWriter{w: w, width: 11}
	fw.field("task", st.ID)
	fw.field("goal", st.Goal)

	status := string(st.Status)
	switch {
	case v.Held:
		status += fmt.Sprintf(" (runner: pid %d on %s since %s, %s)",
			v.Holder.PID, v.Holder.Host, clockTime(now, v.Holder.StartedAt), ago(now, v.Holder.StartedAt))
	case v.Interrupted() && v.OtherHost != "":
		status += fmt.Sprintf(" on host %s (not this machine; grub resume continues it here)", v.OtherHost)
	case v.Interrupted():
		status += " (no runner: interrupted, run grub resume)"
	}
	fw.field("status", status)
	fw.field("phase", string(st.Phase))
	fw.field("iteration", fmt.Sprintf("%d of %d", st.CurrentIteration, st.Limits.MaxIterations))

	switch {
	case v.Features == nil:
		fw.field("features", "0/0 passing (not planned yet)")
	default:
		line := fmt.Sprintf("%d/%d passing", v.Passing(), v.Total())
		if next := v.Features.FirstPending(); next != nil {
			line += ", next: " + next.ID
		}
		fw.field("features", line)
	}
	fw.field("rechecks", sweepLine(st.Limits.RegressionChecks))

	printUsage(fw, st)
	fw.field("sandbox", v.Sandbox.line())
	if p := st.Limits.Protect; len(p) > 0 {
		fw.field("protected", shellQuote(p)+" (a turn may not change these files)")
	}
	switch {
	case v.TrustChanged:
		fw.field("trust", "its settings changed since your grub recorded them (state.json was written by something else): check them, then grub config trust --task "+st.ID)
	case len(v.Untrusted) > 0:
		fw.field("trust", "not trusted here ("+strings.Join(v.Untrusted, ", ")+" came from elsewhere): check them, then grub config trust --task "+st.ID)
	}
	if a := st.Agent.Args; len(a) > 0 {
		fw.field("agent args", shellQuote(a))
	}

	printLastTurn(fw, v)
	if v.LedgerNote != "" {
		fw.field("turn ledger", v.LedgerNote)
	}
	if st.LastError != "" {
		fw.field("last error", st.LastError)
	}
	if st.StopReason != "" {
		fw.field("stop reason", st.StopReason)
	}
	if next := nextLine(harness.NextSteps(st)); next != "" {
		fw.field("what next", next)
	}
	fw.field("updated", fmt.Sprintf("%s (%s)", clockTime(now, st.UpdatedAt), ago(now, st.UpdatedAt)))
	fw.field("harness", v.Dir)
	if line := gitLine(st); line != "" {
		fw.field("git", line)
	}
	if v.Worktree != "" {
		fw.field("worktree", worktreeLine(v))
	}
	return fw.err
}

// printUsage prints what the task has spent against its budgets.
func printUsage(fw *fieldWriter, st *harness.State) {
	tokens := harness.FormatCount(st.Usage.TokensUsed)
	if b := st.Limits.TokenBudget; b > 0 {
		tokens += fmt.Sprintf(" of %s (%s)", harness.FormatCount(b), percent(st.Usage.TokensUsed, b))
	} else {
		tokens += " (no budget)"
	}
	if st.Usage.Estimated {
		tokens += ", partly estimated"
	}
	fw.field("tokens", tokens)
	fw.field("cost", costLine(st))

	elapsed := harness.FormatSeconds(st.Usage.TimeUsedSeconds)
	if b := st.Limits.TimeBudgetSeconds; b > 0 {
		elapsed += fmt.Sprintf(" of %s (%s)", harness.FormatSeconds(b), percent(st.Usage.TimeUsedSeconds, b))
	} else {
		elapsed += " (no budget)"
	}
	fw.field("time", elapsed)
}

// printLastTurn prints the last turn: grub's outcome of it (from its
// ledger line) before the agent's decision, its ledger line, and the
// agent's next step, blocker or question.
func printLastTurn(fw *fieldWriter, v *taskView) {
	d := v.State.LastDecision
	if d == nil {
		return
	}
	l := v.LastTurn
	if l != nil && l.Iteration != d.Iteration {
		l = nil
	}
	line := string(d.Status)
	if l != nil {
		line = fmt.Sprintf("%s (agent: %s)", l.Outcome().Text(), d.Status)
	}
	if d.Iteration > 0 {
		line = fmt.Sprintf("#%d %s", d.Iteration, line)
	}
	if d.Feature != "" {
		line += " [" + d.Feature + "]"
	}
	if d.Summary != "" {
		line += ": " + d.Summary
	}
	fw.field("last turn", line)
	if l != nil {
		fw.field("turn record", turnRecordLine(l))
	}
	if d.NextStep != "" {
		fw.field("next step", d.NextStep)
	}
	if d.Blocker != "" {
		fw.field("blocker", d.Blocker)
	}
	if d.Question != "" {
		q := d.Question
		for i, o := range d.Options {
			q += fmt.Sprintf("\n%d. %s", i+1, o)
		}
		fw.field("question", q+"\n(answer with: grub answer \"<text>\")")
	}
}

// clockTime renders t for people, in the time zone of the clock's now (the
// local zone, unless a test injected another clock).
func clockTime(now, t time.Time) string {
	return t.In(now.Location()).Format("2006-01-02 15:04:05 MST")
}

// costLine is the status's cost line: what the backend reported against
// the cost budget; "not reported" when the backend reported none.
func costLine(st *harness.State) string {
	b := st.Limits.CostBudgetUSD
	if st.Usage.CostUSD == nil {
		if b > 0 {
			return fmt.Sprintf("not reported (budget %s)", templates.FormatUSD(b))
		}
		return "not reported"
	}
	spent := 0.0
	if st.Usage.CostUSD != nil {
		spent = *st.Usage.CostUSD
	}
	line := templates.FormatUSD(spent)
	if b > 0 {
		return line + fmt.Sprintf(" of %s (%d%%)", templates.FormatUSD(b), int(spent*100/b))
	}
	return line + " (no budget)"
}

// turnRecordLine is the last turn's ledger line in one line: how long it
// ran, what it used, what grub checked and what the referee caught.
func turnRecordLine(l *harness.TurnRecord) string {
	parts := []string{fmt.Sprintf("%s, %s tokens", time.Duration(l.DurationSeconds*float64(time.Second)).Round(time.Second), harness.FormatCount(l.Usage.Tokens()))}
	if c := l.Usage.CostUSD; c != nil {
		parts[0] += ", " + templates.FormatUSD(*c)
	}
	audited, passed := 0, 0
	for _, c := range l.Checks {
		if c.Name == harness.CheckAudit {
			// The completion audit checks every feature: one part for it.
			audited++
			if c.Result == harness.CheckPassed {
				passed++
			}
			continue
		}
		parts = append(parts, c.Name+" "+strings.ReplaceAll(c.Result, "_", " "))
	}
	if audited > 0 {
		parts = append(parts, fmt.Sprintf("completion audit %d of %d passed", passed, audited))
	}
	for _, f := range l.Findings {
		what := "caught: "
		if !f.Kind.Caught() {
			what = "failed: "
		}
		parts = append(parts, what+strings.ReplaceAll(string(f.Kind), "_", " "))
	}
	return strings.Join(parts, "; ")
}

// nextLine is the commands that make sense next, one a line: "grub
// resume 0a1b2c3d --max-iter 50    (allow more turns)"; "" for none.
func nextLine(steps []harness.NextStep) string {
	lines := make([]string, len(steps))
	for i, s := range steps {
		lines[i] = s.Command + "    (" + s.Why + ")"
	}
	return strings.Join(lines, "\n")
}

// sweepLine says how many passing features' checks grub runs again each
// execution turn (--regression-checks).
func sweepLine(n int) string {
	if n == 0 {
		return "off (--regression-checks 0); the completion audit still runs every check"
	}
	return fmt.Sprintf("%d other passing feature(s) checked again each turn, least recently checked first", n)
}
