package cli

import (
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
	"github.com/spf13/cobra"
)

// ListOptions are the inputs of grub list.
type ListOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	JSON bool
}

// NewCmdList builds grub list. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdList(f *Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the tasks of this workspace, most recently updated first",
		Long: `List every task in .grub/ of this workspace, most recently updated first:
its id, status, iteration, passing features, when it last changed, and goal.

In a git repository the tasks of its other work trees are listed too (grub
start --worktree runs each task in one), with a WORKTREE column saying where
each lives; every command that takes an id finds them there.

A running task whose runner died shows as "running (no runner)"; run
grub resume <id> to pick it up again.

A task whose state.json is corrupt, missing or not a regular file is listed
as damaged, with the reason, after the others; the listing still exits 0.
grub doctor <id> says what is wrong and how to fix it.

--json prints one JSON object on stdout that follows
schemas/list-output.schema.json; the format is stable. An empty workspace
is not an error: the list is empty.`,
		Example: `  grub list
  grub list --json | jq -r '.tasks[] | select(.status == "blocked") | .id'
  grub -C ~/src/api list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object (schemas/list-output.schema.json)")
	return cmd
}

// listOutput is grub list --json (schemas/list-output.schema.json).
type listOutput struct {
	Tasks []listTask `json:"tasks"`
	// Damaged are the tasks whose state cannot be loaded; absent when none.
	Damaged []listDamaged `json:"damaged,omitempty"`
}

// listDamaged is a damaged task in grub list --json.
type listDamaged struct {
	ID      string `json:"id"`
	Error   string `json:"error"`
	Harness string `json:"harness"`
}

type listTask struct {
	ID            string         `json:"id"`
	Goal          string         `json:"goal"`
	Status        harness.Status `json:"status"`
	Phase         harness.Phase  `json:"phase"`
	Running       bool           `json:"running"`
	Interrupted   bool           `json:"interrupted"`
	Iteration     int            `json:"iteration"`
	MaxIterations int            `json:"maxIterations"`
	Features      featuresOutput `json:"features"`
	Harness       string         `json:"harness"`
	Worktree      string         `json:"worktree,omitempty"`
	Branch        string         `json:"branch,omitempty"`
	OtherHost     string         `json:"otherHost,omitempty"`
	UpdatedAt     time.Time      `json:"updatedAt"`
}

func listRun(opts *ListOptions) error {
	store, err := opts.Store()
	if err != nil {
		return err
	}
	views, damaged, err := scanViews(store)
	if err != nil {
		return err
	}
	inWorktrees := slices.ContainsFunc(views, func(v *taskView) bool { return v.Worktree != "" })

	if opts.JSON {
		out := listOutput{Tasks: make([]listTask, 0, len(views))}
		for _, v := range views {
			st := v.State
			out.Tasks = append(out.Tasks, listTask{
				ID:            st.ID,
				Goal:          st.Goal,
				Status:        st.Status,
				Phase:         st.Phase,
				Running:       v.Held,
				Interrupted:   v.Interrupted(),
				Iteration:     st.CurrentIteration,
				MaxIterations: st.Limits.MaxIterations,
				Features:      featuresOutput{Passing: v.Passing(), Total: v.Total()},
				Harness:       v.Dir,
				Worktree:      v.Worktree,
				Branch:        v.Branch,
				OtherHost:     v.OtherHost,
				UpdatedAt:     st.UpdatedAt,
			})
		}
		for _, d := range damaged {
			out.Damaged = append(out.Damaged, listDamaged{ID: d.ID, Error: d.Err.Error(), Harness: d.Store.Rel(d.Store.Dir(d.ID))})
		}
		return writeJSON(opts.IO.Out, schemas.ListOutput, out)
	}

	if len(views) == 0 && len(damaged) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no tasks in %s yet; start one with: grub start \"<goal>\"\n", store.Rel(store.GrubDir()))
		return nil
	}
	goalWidth := 0 // full goals when the output is piped
	if opts.IO.OutTTY {
		goalWidth = 60
	}
	now := opts.Now()
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	// WORKTREE appears when a task lives in another work tree.
	wtCol := func(v *taskView) string {
		if !inWorktrees {
			return ""
		}
		return worktreeCell(store, v) + "\t"
	}
	header := "ID\tSTATUS\tITER\tFEATURES\tUPDATED\t"
	if inWorktrees {
		header += "WORKTREE\t"
	}
	fmt.Fprintln(tw, header+"GOAL")
	for _, v := range views {
		st := v.State
		status := string(st.Status)
		switch {
		case v.Interrupted() && v.OtherHost != "":
			status += " (on host " + oneLine(v.OtherHost, 0) + ")"
		case v.Interrupted():
			status += " (no runner)"
		}
		features := "-"
		if v.Features != nil {
			features = fmt.Sprintf("%d/%d", v.Passing(), v.Total())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\t%s%s\n",
			st.ID, status, st.CurrentIteration, st.Limits.MaxIterations, features,
			ago(now, st.UpdatedAt), wtCol(v), oneLine(st.Goal, goalWidth))
	}
	for _, d := range damaged {
		cell := ""
		if inWorktrees {
			cell = "-\t"
		}
		fmt.Fprintf(tw, "%s\tdamaged\t-\t-\t-\t%s%s\n", d.ID, cell, oneLine(d.Err.Error(), 0))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range damaged {
		fmt.Fprintf(opts.IO.ErrOut, "grub: task %s is damaged; grub doctor %s says what is wrong and how to fix it\n", d.ID, d.ID)
	}
	return nil
}
