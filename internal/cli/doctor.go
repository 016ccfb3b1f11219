package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/gitx"
	"github.com/grub-dev/grub/schemas"
)

// DoctorOptions are the inputs of grub doctor.
type DoctorOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)
	Now   func() time.Time

	ID     string
	JSON   bool
	Repair bool
}

// NewCmdDoctor builds grub doctor. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdDoctor(f *Factory, runF func(*DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: f.IO, Store: f.Store, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "doctor [<id>] [--repair]",
		Short: "Check a task's harness and say what is wrong and how to fix it",
		Long: `Check the harness of a task (without <id>, of every task in the workspace):

  files         grub's files in .grub/<id>/ are there and are regular files
  state         state.json follows its schema
  feature-list  feature-list.json follows its schema
  control       control.json (requests for a runner, in grub's private folder) follows its schema
  lock          who holds the lock (a runner, or a short-lived grub command);
                a dead runner's agent or processes still on record; a task
                left "running" without a runner
  log           progress-log.md has one entry per turn state.json counts
  git           one commit per turn (unless the task runs with --no-commit)
  git-programs  the hooks and program-running config keys of the repository:
                grub never runs them, your git does (a warning, to look at)

Each problem is printed with how to fix it. doctor exits 0 when every task
checked is healthy (warnings allowed) and 1 when it found a problem.

--repair rebuilds what can be rebuilt from the other files and from git
history, saying each step: a lost or corrupt state.json from the last turn
commit's copy (git show), or else from feature-list.json and the progress
log; a lost feature-list.json, checklist, progress log or init.sh from the
state or the last turn commit; a corrupt feature-list.json from the list
grub last accepted; missing log entries as "unknown" turns; a missing
commit of the last turn as a recovery commit of the workspace. A damaged
file is never deleted: it is renamed <name>.damaged-<time> first. --repair
refuses (exit 75) while a runner holds the task's lock.

--json prints one JSON object on stdout that follows
schemas/doctor-output.schema.json; on a failure, {"error": "…",
"exitCode": N} (schemas/error-output.schema.json).`,
		Example: `  grub doctor
  grub doctor 0a1b2c3d --repair
  grub doctor --json | jq '.tasks[] | select(.healthy | not) | .id'`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.ID = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return jsonError(opts.IO.Out, opts.JSON, doctorRun(opts))
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object (schemas/doctor-output.schema.json)")
	cmd.Flags().BoolVar(&opts.Repair, "repair", false, "rebuild what can be rebuilt from the other files and git history, saying each step")
	return cmd
}

// The severities of a finding. Only a problem makes a task unhealthy.
const (
	findingOK      = "ok"
	findingWarning = "warning"
	findingProblem = "problem"
)

// finding is one result of a check (schemas/doctor-output.schema.json).
type finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// Fix says what to do about a warning or a problem.
	Fix string `json:"fix,omitempty"`
	// Repairable reports that --repair fixes it.
	Repairable bool `json:"repairable,omitempty"`
}

// doctorReport is what doctor found in one task.
type doctorReport struct {
	ID       string    `json:"id"`
	Harness  string    `json:"harness"`
	Healthy  bool      `json:"healthy"`
	Findings []finding `json:"findings"`
	// Repairs are the steps --repair took, in order.
	Repairs []string `json:"repairs,omitempty"`
}

// doctorOutput is grub doctor --json (schemas/doctor-output.schema.json).
type doctorOutput struct {
	Healthy bool           `json:"healthy"`
	Tasks   []doctorReport `json:"tasks"`
}

func doctorRun(opts *DoctorOptions) error {
	store, err := storeForID(opts.Store, opts.ID) // a task in another work tree is checked there
	if err != nil {
		return err
	}
	ids, err := doctorIDs(store, opts.ID)
	if err != nil {
		return err
	}
	repo, repoErr := openRepo(store.Root)
	out := doctorOutput{Healthy: true, Tasks: []doctorReport{}}
	for _, id := range ids {
		var steps []string
		if opts.Repair {
			if steps, err = repairTask(opts, store, repo, id); err != nil {
				return err
			}
		}
		rep := inspectTask(store, repo, repoErr, id)
		rep.Repairs = steps
		out.Healthy = out.Healthy && rep.Healthy
		out.Tasks = append(out.Tasks, rep)
	}
	if opts.JSON {
		err = writeJSON(opts.IO.Out, schemas.DoctorOutput, out)
	} else {
		err = printDoctor(opts.IO.Out, out, opts.Repair)
	}
	if err != nil {
		return err
	}
	if !out.Healthy {
		return &ExitError{Code: ExitFailed}
	}
	return nil
}

// doctorIDs are the tasks doctor checks: the one named, or every task of
// the workspace, damaged ones included.
func doctorIDs(store *harness.Store, id string) ([]string, error) {
	if id != "" {
		id, err := store.Resolve(id)
		return []string{id}, err
	}
	tasks, damaged, err := store.Scan()
	if err != nil {
		return nil, err
	}
	if len(tasks)+len(damaged) == 0 {
		_, err := store.Resolve("")
		return nil, err
	}
	var ids []string
	for _, st := range tasks {
		ids = append(ids, st.ID)
	}
	for _, d := range damaged {
		ids = append(ids, d.ID)
	}
	return ids, nil
}

// printDoctor writes the findings for people: problems and warnings with
// their fixes, and one line per check that passed.
func printDoctor(w io.Writer, out doctorOutput, repaired bool) error {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	for i, rep := range out.Tasks {
		if i > 0 {
			p("\n")
		}
		verdict := "healthy"
		if !rep.Healthy {
			verdict = "has problems"
		}
		p("task %s (%s): %s\n", rep.ID, rep.Harness, verdict)
		for _, f := range rep.Findings {
			p("  %-8s %-13s %s\n", f.Severity, f.Check, oneLine(f.Message, 0))
			if f.Fix != "" {
				p("  %-8s %-13s fix: %s\n", "", "", oneLine(f.Fix, 0))
			}
		}
		if !rep.Healthy && !repaired && hasRepairable(rep) {
			p("run grub doctor --repair %s to rebuild what can be rebuilt\n", rep.ID)
		}
	}
	return err
}

func hasRepairable(rep doctorReport) bool {
	for _, f := range rep.Findings {
		if f.Repairable {
			return true
		}
	}
	return false
}

// lstatKind is what is at path: "" for a regular file, "missing", or
// what it is instead ("a folder", …).
func lstatKind(path string) string {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case err != nil:
		return "unreadable: " + err.Error()
	case fi.Mode().IsRegular():
		return ""
	case fi.IsDir():
		return "a folder"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// repoFor is nil when the task's turns are not committed.
func repoFor(repo *gitx.Repo, st *harness.State) *gitx.Repo {
	if st != nil && st.NoCommit {
		return nil
	}
	return repo
}
