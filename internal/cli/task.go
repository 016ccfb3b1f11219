package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/schemas"
	"github.com/spf13/cobra"
)

// openTask opens the workspace's store and resolves id ("" for the most
// recently updated task, or a unique prefix of an id) into the id of an
// existing task. The store's errors already say what to do: run grub list,
// or grub start.
//
// A task may live in another work tree of the repository (grub start
// --worktree): the store returned is that work tree's (resolveInStores).
func openTask(open func() (*harness.Store, error), id string) (*harness.Store, string, error) {
	home, err := open()
	if err != nil {
		return nil, "", err
	}
	store, id, err := resolveInStores(home, id)
	if err != nil {
		return nil, "", err
	}
	return store, id, nil
}

// loadTask opens the workspace's store, resolves id as openTask does and
// loads that task's state.
func loadTask(open func() (*harness.Store, error), id string) (*harness.Store, *harness.State, error) {
	store, st, _, err := loadTaskDamaged(open, id)
	return store, st, err
}

// loadTaskDamaged is loadTask that also returns, when id is "", the
// workspace's damaged tasks: the most recently updated healthy task is
// loaded whatever state the others are in.
func loadTaskDamaged(open func() (*harness.Store, error), id string) (*harness.Store, *harness.State, []harness.DamagedTask, error) {
	if strings.TrimSpace(id) == "" {
		home, err := open()
		if err != nil {
			return nil, nil, nil, err
		}
		// No healthy task: the first damaged one's error, or no tasks.
		return latestTask(taskStores(home))
	}
	store, id, err := openTask(open, id)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := store.LoadState(id)
	if err != nil {
		return nil, nil, nil, err
	}
	return store, st, nil, nil
}

// warnDamaged says on w which tasks are damaged and how to look into them.
func warnDamaged(w io.Writer, damaged []harness.DamagedTask) {
	for _, d := range damaged {
		fmt.Fprintf(w, "grub: warning: task %s is damaged (%s); run grub doctor %s\n", d.ID, termsafe.Line(d.Err.Error()), d.ID)
	}
}

// taskView is what status and list show of one task: its state, whether a
// controller holds its lock, and its feature list.
type taskView struct {
	State *harness.State
	// Untrusted are the keys of the task's settings that run programs or
	// lift the sandbox and were not made by this user's grub here (trust.go);
	// resume refuses the task until they are trusted.
	Untrusted []string
	// TrustChanged says the settings differ from the ones this user's grub
	// recorded for the task.
	TrustChanged bool
	// Dir is the harness folder relative to the workspace root.
	Dir string
	// Held reports that a live controller (a runner) holds the lock;
	// Holder says who. A short-lived command holding it for a moment is
	// not a runner.
	Held   bool
	Holder harness.LockInfo
	// Features is the feature list, nil when the initializer has not
	// written one yet.
	Features *featurelist.List
	// FeatureNote explains where the counts come from when the feature
	// list on disk could not be used.
	FeatureNote string
	// Sandbox is the task's sandbox as resolved on this system.
	Sandbox sandboxView
	// LastTurn is the last line of the turn ledger, nil before the first
	// turn is recorded (or when LedgerNote says why it could not be read).
	LastTurn   *harness.TurnRecord
	LedgerNote string
	// OtherHost is the host the lock record names when no runner holds
	// the lock and that host is not this machine (a harness committed
	// elsewhere, a CI runner): not a runner here.
	OtherHost string
	// Worktree and Branch say where a task lives when that is another
	// work tree of the repository than the workspace grub was run in
	// (locateView); empty otherwise.
	Worktree, Branch string
}

// Interrupted reports a task whose status is running but whose runner is
// gone: grub resume recovers it.
func (v *taskView) Interrupted() bool {
	return v.State.Status == harness.StatusRunning && !v.Held
}

// Passing and Total count the features; both are 0 before planning.
func (v *taskView) Passing() int {
	if v.Features == nil {
		return 0
	}
	return v.Features.Passing()
}

// Total counts the features of the list.
func (v *taskView) Total() int {
	if v.Features == nil {
		return 0
	}
	return len(v.Features.Features)
}

// loadTaskView reads a task's state, lock holder and feature list. An
// invalid feature-list.json (the agent may be halfway through editing it)
// does not fail the view: the last list the controller accepted is counted
// instead, with a note.
func loadTaskView(store *harness.Store, st *harness.State) (*taskView, error) {
	v := &taskView{State: st, Dir: store.Rel(store.Dir(st.ID)), Sandbox: newSandboxView(st, store.Root, nil, nil)}
	info, held, err := store.Holder(st.ID)
	if err != nil {
		return nil, err
	}
	v.Held, v.Holder = held && info.Runner(), info
	if !held && info.Host != "" && info.Host != store.HostName() {
		v.OtherHost = info.Host
	}
	if turns, err := store.LoadTurns(st.ID); err != nil {
		v.LedgerNote = err.Error()
	} else if len(turns) > 0 {
		v.LastTurn = &turns[len(turns)-1]
	}

	list, _, err := store.LoadFeatureListAs(st.ID, st.FeatureListBaseline)
	var schemaErr *schemas.Error
	switch {
	case err == nil:
		v.Features = list
	case errors.Is(err, os.ErrNotExist):
		v.Features = st.FeatureListBaseline
	case errors.As(err, &schemaErr):
		v.Features = st.FeatureListBaseline
		v.FeatureNote = fmt.Sprintf("%v; counting the last accepted list", err)
	default:
		return nil, err
	}
	return v, nil
}

// runnerOutput is the controller holding a task's lock, in --json output.
type runnerOutput struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"startedAt"`
}

// featuresOutput counts features in --json output.
type featuresOutput struct {
	Passing int `json:"passing"`
	Total   int `json:"total"`
}

// completeTaskIDs completes the <id> argument of a command with the ids of
// the workspace's tasks, each described by its status and goal.
func completeTaskIDs(f *Factory) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		store, err := f.Store()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		states, _, err := store.Scan()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, st := range states {
			out = append(out, cobra.CompletionWithDesc(st.ID, fmt.Sprintf("%s: %s", st.Status, oneLine(st.Goal, 60))))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// taskIDArg checks that a command got at most one <id> argument.
func taskIDArg(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return &UsageError{
			Err:     fmt.Errorf("%s takes at most one task id, got %d arguments", cmd.CommandPath(), len(args)),
			Command: cmd.CommandPath(),
		}
	}
	return nil
}

// idRunE is the RunE of a command that takes an optional task id: it
// stores the id in *id and runs runF (a test's) or run.
func idRunE[O any](opts *O, id *string, runF, run func(*O) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			*id = args[0]
		}
		if runF != nil {
			return runF(opts)
		}
		return run(opts)
	}
}
