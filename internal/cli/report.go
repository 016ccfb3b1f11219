package cli

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/internal/report"
	"github.com/grub-dev/grub/schemas"
)

// ReportOptions are the inputs of grub report.
type ReportOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	ID     string
	HTML   string // --html FILE; "-" is stdout
	Format string // --format md|json; "" prints md unless --html is given
}

// NewCmdReport builds grub report. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdReport(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "report [<id>] [--html FILE] [--format md|json]",
		Short: "Show the shape of a run: progress, cost, what the referee caught",
		Long: `Report on a task from its turn ledger (.grub/<id>/turns.jsonl), its state,
its feature list and its turn commits.

--html FILE writes one self-contained page (inline CSS and SVG; no scripts,
nothing fetched from the network): the goal, the status and why it stopped,
the budgets used, a burn-up chart of passing features per turn, tokens (and
cost) per turn, a timeline of the turns (decision, feature, duration,
verification, what the referee caught, the commit) and the feature table
with each feature's evidence and the turn that passed it. Open it in any
browser, or keep it as a CI artifact.

--format md prints a compact Markdown version for a pull request or
$GITHUB_STEP_SUMMARY (the default when --html is not given); --format json
prints the same data as one object that follows
schemas/report-output.schema.json.

Turns are joined with their commits by iteration; a turn run with
--no-commit or outside git has no commit, and a turn known only from git
(recorded by an older grub) has no usage or checks.`,
		Example: `  grub report --html report.html
  grub report --format md >> "$GITHUB_STEP_SUMMARY"
  grub report 0a1b2c3d --format json | jq '.caught'`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Format {
			case "", "md", "json":
			default:
				return usageErrorf("--format %q: want md or json", opts.Format)
			}
			if opts.HTML == "-" && opts.Format != "" {
				return usageErrorf("--html - and --format both write to stdout; write the page to a file")
			}
			return idRunE(opts, &opts.ID, runF, reportRun)(cmd, args)
		},
	}
	cmd.Flags().StringVar(&opts.HTML, "html", "", "write the report as one self-contained HTML page to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&opts.Format, "format", "", "print the report on stdout as md (Markdown) or json (schemas/report-output.schema.json)")
	return cmd
}

func reportRun(opts *ReportOptions) error {
	r, err := buildReport(opts)
	if err != nil {
		return err
	}
	if opts.HTML != "" {
		var page bytes.Buffer
		if err := report.HTML(&page, r); err != nil {
			return fmt.Errorf("render the report: %w", err)
		}
		if opts.HTML == "-" {
			_, err = opts.IO.Out.Write(page.Bytes())
			return err
		}
		if err := atomicfile.WriteFile(opts.HTML, page.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "wrote the report of task %s to %s\n", r.Task, opts.HTML)
	}
	switch {
	case opts.Format == "json":
		return writeJSON(opts.IO.Out, schemas.ReportOutput, r)
	case opts.Format == "md" || opts.HTML == "":
		return report.Markdown(opts.IO.Out, r)
	}
	return nil
}

// buildReport reads what the report is made of: state, the feature list
// (the accepted one when the file is missing or broken), the ledger and
// the task's turn commits.
func buildReport(opts *ReportOptions) (*report.Report, error) {
	store, st, err := loadTask(opts.Store, opts.ID)
	if err != nil {
		return nil, err
	}
	v, err := loadTaskView(store, st)
	if err != nil {
		return nil, err
	}
	if v.FeatureNote != "" {
		fmt.Fprintf(opts.IO.ErrOut, "grub: warning: %s\n", v.FeatureNote)
	}
	turns, err := store.LoadTurns(st.ID)
	if err != nil {
		return nil, err
	}
	commits, err := turnCommits(store.Root, st.ID)
	if err != nil {
		return nil, err
	}
	return report.Build(report.Input{State: st, Features: v.Features, Turns: turns, Commits: commits, Now: opts.Now()}), nil
}

// turnCommits reads the task's turn commits; none outside a git repository.
func turnCommits(root, id string) ([]report.Commit, error) {
	repo, err := openRepo(root)
	if err != nil || repo == nil {
		return nil, err
	}
	entries, err := repo.History(id)
	if err != nil {
		return nil, err
	}
	out := make([]report.Commit, 0, len(entries))
	for _, e := range entries {
		out = append(out, commitOf(e))
	}
	return out, nil
}

func commitOf(e gitx.HistoryEntry) report.Commit {
	return report.Commit{Hash: e.Commit, Time: e.Time, Iteration: e.Iteration, Feature: e.Feature,
		Status: e.Status, Summary: e.Summary, CostUSD: e.CostUSD}
}
