package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

// HistoryOptions are the inputs of grub history.
type HistoryOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)

	ID   string
	JSON bool
}

// NewCmdHistory builds grub history. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdHistory(f *Factory, runF func(*HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "history [<id>]",
		Short: "List a task's turns from git history",
		Long: `List the turns of a task as grub committed them: one row per commit, with the
commit, time, iteration, feature, grub's outcome of the turn (from the turn
ledger, .grub/<id>/turns.jsonl: accepted, claim_rejected, regression_found,
rejected, failed, cancelled or unknown; "-" for a turn without a ledger
line), the features passing after it (from the ledger too), cost (when the
backend reported one: the Grub-Cost trailer; "not reported" otherwise) and
the agent's summary. It
reads the repository directly (no git binary needed) and keeps the commits
whose Grub-Task trailer names the task, oldest first.

Review a turn with git show <commit>, or the whole run with
git log -p .grub/<id>/progress-log.md.

--json prints one object that follows schemas/history-output.schema.json.`,
		Example: `  grub history
  grub history 0a1b2c3d --json | jq '.turns[] | select(.outcome == "rejected")'`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              idRunE(opts, &opts.ID, runF, historyRun),
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object (schemas/history-output.schema.json)")
	return cmd
}

type historyOutput struct {
	Task  string        `json:"task"`
	Turns []historyTurn `json:"turns"`
}

type historyTurn struct {
	Commit    string    `json:"commit"`
	Time      time.Time `json:"time"`
	Iteration int       `json:"iteration"`
	Feature   string    `json:"feature,omitempty"`
	Status    string    `json:"status"`
	Summary   string    `json:"summary"`
	CostUSD   *float64  `json:"costUSD,omitempty"`

	// From the turn's ledger line, when there is one: grub's verdict
	// (harness.TurnRecord.Outcome) and the agent's decision.
	Outcome         harness.Outcome `json:"outcome,omitempty"`
	Decision        string          `json:"decision,omitempty"`
	DurationSeconds *float64        `json:"durationSeconds,omitempty"`
	Tokens          *int64          `json:"tokens,omitempty"`
	Features        *featuresOutput `json:"features,omitempty"`
	Caught          []string        `json:"caught,omitempty"`
	// Failed are the turn's findings that are not catches (a timeout, an
	// agent that failed): harness.FindingKind.Caught.
	Failed []string `json:"failed,omitempty"`
}

// enrich adds what the turn's ledger line knows to a turn read from git.
func (t *historyTurn) enrich(l harness.TurnRecord) {
	d, tok := l.DurationSeconds, l.Usage.Tokens()
	t.Outcome, t.Decision, t.DurationSeconds, t.Tokens = l.Outcome(), string(l.Decision), &d, &tok
	t.Features = &featuresOutput{Passing: l.Passing, Total: l.Total}
	for _, f := range l.Findings {
		if f.Kind.Caught() {
			t.Caught = append(t.Caught, string(f.Kind))
		} else {
			t.Failed = append(t.Failed, string(f.Kind))
		}
	}
}

func historyRun(opts *HistoryOptions) error {
	store, id, err := openTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	repo, err := openRepo(store.Root)
	if err != nil {
		return err
	}
	if repo == nil {
		return usageErrorf("%s is not in a git repository, so task %s has no history; read its progress log with grub log", store.Root, id)
	}
	entries, err := repo.History(id)
	if err != nil {
		return err
	}
	lines, err := store.LoadTurns(id)
	if err != nil {
		return err
	}
	ledger := map[int]harness.TurnRecord{}
	for _, l := range harness.LatestTurns(lines) {
		ledger[l.Iteration] = l
	}
	out := historyOutput{Task: id, Turns: []historyTurn{}}
	for _, e := range entries {
		t := historyTurn{Commit: e.Commit, Time: e.Time.UTC(), Iteration: e.Iteration,
			Feature: e.Feature, Status: e.Status, Summary: e.Summary, CostUSD: e.CostUSD}
		if l, ok := ledger[e.Iteration]; ok {
			t.enrich(l)
		}
		out.Turns = append(out.Turns, t)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, schemas.HistoryOutput, out)
	}
	if len(out.Turns) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "task %s has no commits yet (it ran with --no-commit, or has not finished a turn)\n", id)
		return nil
	}
	return printHistory(opts.IO.Out, out.Turns)
}

// printHistory is history's table: one row a turn, its OUTCOME grub's
// verdict (not the task's status after it), COST always ("not reported"
// when the backend gave none).
func printHistory(w io.Writer, turns []historyTurn) error {
	cost := func(t historyTurn) string {
		if t.CostUSD == nil {
			return "not reported"
		}
		return templates.FormatUSD(*t.CostUSD)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMIT\tTIME\tTURN\tFEATURE\tOUTCOME\tPASS\tCOST\tSUMMARY")
	for _, t := range turns {
		pass, outcome := "-", "-"
		if t.Features != nil {
			pass = fmt.Sprintf("%d/%d", t.Features.Passing, t.Features.Total)
		}
		if t.Outcome != "" {
			outcome = string(t.Outcome)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", short(t.Commit), t.Time.Format(time.DateTime), t.Iteration,
			orDash(oneLine(t.Feature, 0)), outcome, pass, cost(t), oneLine(t.Summary, 60))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
