package cli

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/spf13/cobra"
)

// EditOptions are the inputs of grub edit.
type EditOptions struct {
	IO     *IOStreams
	Store  func() (*harness.Store, error)
	Now    func() time.Time
	Getenv func(string) string
	// Editor opens path in the user's editor and waits for it to exit.
	Editor func(opts *EditOptions, path string) error

	// ID is the task's id or a prefix of one ("": the most recent task).
	ID string
	// Goal is --goal's value, when GoalGiven.
	Goal      string
	GoalGiven bool
	// Limits holds the limit flags that were given.
	Limits harness.LimitChanges
	// Sandbox applies the sandbox flags given to a task's settings; nil
	// when none was given.
	Sandbox  func(*harness.Sandbox) error
	Landlock func() (int, bool)
	// Hooks applies the hook flags given to a task's hooks; nil when none
	// was given.
	Hooks func(*harness.Hooks) error
}

// taskIDPattern matches a task id or a prefix of one.
var taskIDPattern = regexp.MustCompile(`^[0-9a-f]{1,8}$`)

// NewCmdEdit builds grub edit. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdEdit(f *Factory, runF func(*EditOptions) error) *cobra.Command {
	opts := &EditOptions{IO: f.IO, Store: f.Store, Now: f.Now, Getenv: f.Getenv, Editor: runEditor, Landlock: f.Landlock}
	var (
		limits limitFlags
		sf     sandboxFlags
		hf     hookFlags
	)
	cmd := &cobra.Command{
		Use:   `edit [<id>] [--goal "new goal"] [flags]`,
		Short: "Change a task's goal, limits, sandbox or hooks",
		Long: `Change the goal of a task (--goal), or its limits, sandbox or hooks. <id>
is a task id or the start of one; without it, the most recently updated
task. The one argument is only ever an id: an id no task has is an error
(exit 2), never a new goal.

When no flag is given, the current goal opens in your editor
($EDITOR, else $VISUAL, else vi on a terminal); save an empty file to
abort. Without a terminal and without $EDITOR or $VISUAL, give --goal.

The old and the new goal are recorded in progress-log.md, and the agent's
next prompt carries an "objective updated" note. The features themselves
are not changed (only the goal the feature list records follows the new
wording): the agent is asked to work towards it from there.

When a controller is running the task, edit writes a request to its
control.json (in grub's private folder) and the change takes effect at the next turn boundary. When no
controller runs it, state.json is changed directly.

--sandbox, --sandbox-allow, --no-network, --allow-domain, --pass-env and
--sandbox-allow-git change the task's sandbox (see grub start --help; --sandbox default goes
back to the default).
A running task records the change at once and applies it from its next
run (grub resume): the commands of the current run keep the sandbox they
started with.

--on-turn, --on-stop and --hook-timeout change the task's hooks (see grub
start --help); --on-turn '' and --on-stop '' remove them. A running task
uses the new hooks from its next turn.

--max-iter and --max-fail must be at least 1; --token-budget 0 and
--time-budget 0 remove that budget. --time-budget takes a Go duration in
whole seconds, such as 90s, 45m or 2h. A complete task cannot be edited.`,
		Example: `  grub edit --goal "add OAuth login to the API, GitHub provider only"
  grub edit 0a1b2c3d --goal "add OAuth login to the API"
  grub edit                           # edit the goal in $EDITOR
  grub edit --max-iter 50 --token-budget 5000000
  grub edit --time-budget 2h
  grub edit --sandbox read-only --no-network
  grub edit --allow-domain @go --allow-domain api.example.com
  grub edit --on-turn 'git push origin HEAD:grub/0a1b2c3d'
  grub edit --on-turn ''               # remove the on-turn hook`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return &UsageError{
					Err:     fmt.Errorf("grub edit takes at most a task id, got %d arguments; give the new goal with --goal: grub edit [<id>] --goal \"new goal\"", len(args)),
					Command: cmd.CommandPath(),
				}
			}
			if len(args) == 1 && !taskIDPattern.MatchString(args[0]) {
				return &UsageError{
					Err:     fmt.Errorf("%q is not a task id (8 hex characters, or the start of them); to change the goal: grub edit --goal %q", args[0], args[0]),
					Command: cmd.CommandPath(),
				}
			}
			return nil
		},
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			opts.GoalGiven = cmd.Flags().Changed("goal")
			changes, err := limits.changes(cmd)
			if err != nil {
				return err
			}
			opts.Limits = changes
			if sf.given(cmd) {
				opts.Sandbox = func(s *harness.Sandbox) error { return sf.apply(cmd, s) }
			}
			if hf.given(cmd) {
				opts.Hooks = func(h *harness.Hooks) error { return hf.apply(cmd, h) }
			}
			if runF != nil {
				return runF(opts)
			}
			return editRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Goal, "goal", "", "the new `goal` (recorded in progress-log.md; the agent's next prompt says it changed)")
	limits.register(cmd)
	sf.register(cmd)
	hf.register(cmd)
	return cmd
}

func editRun(opts *EditOptions) error {
	goal, goalGiven := opts.Goal, opts.GoalGiven
	store, st, err := loadTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	id := st.ID
	if st.Status == harness.StatusComplete {
		return usageErrorf("task %s is complete, so its goal and limits can no longer change; start a new task with: grub start \"<goal>\"", id)
	}
	if b := opts.Limits.CostBudgetUSD; b != nil {
		if err := checkCostBudget(*b, st.Agent.Kind); err != nil {
			return err
		}
	}
	goal, err = editedGoal(opts, st, goal, goalGiven)
	if err != nil {
		return err
	}
	sb, err := editedSandbox(opts, store, st)
	if err != nil {
		return err
	}
	var hooks *harness.Hooks
	if opts.Hooks != nil {
		h := st.Hooks
		if err := opts.Hooks(&h); err != nil {
			return err
		}
		hooks = &h
	}
	if goal == st.Goal {
		if opts.Limits.Empty() && sb == nil && hooks == nil {
			fmt.Fprintf(opts.IO.ErrOut, "the goal of task %s is unchanged; nothing to do\n", id)
			return nil
		}
		goal = ""
	}
	res, err := applyEdit(opts, store, id, goal, sb, hooks)
	if err != nil {
		return err
	}
	reportEdit(opts, id, goal, res)
	return nil
}

// editedSandbox is the task's sandbox with the sandbox flags applied,
// checked against this kernel; nil when no sandbox flag was given.
func editedSandbox(opts *EditOptions, store *harness.Store, st *harness.State) (*harness.Sandbox, error) {
	if opts.Sandbox == nil {
		return nil, nil
	}
	sb := st.Sandbox
	sb.Allow, sb.PassEnv = slices.Clone(sb.Allow), slices.Clone(sb.PassEnv)
	if err := opts.Sandbox(&sb); err != nil {
		return nil, err
	}
	if _, err := resolveSandbox(sb, st.Agent.Kind, store.Root, opts.Getenv, opts.Landlock); err != nil {
		return nil, err
	}
	return &sb, nil
}

// editedGoal is the new goal of an edit: the one given, checked, or, when
// neither a goal nor a limit is given, the one the user writes in their
// editor. Without a goal but with limits, it is the current goal.
func editedGoal(opts *EditOptions, st *harness.State, goal string, goalGiven bool) (string, error) {
	switch {
	case goalGiven:
		goal = strings.TrimSpace(goal)
		if goal == "" {
			return "", usageErrorf("the new goal is empty; give the new wording, e.g. grub edit --goal \"add OAuth login\"")
		}
		return goal, nil
	case opts.Limits.Empty() && opts.Sandbox == nil && opts.Hooks == nil:
		return editGoalInEditor(opts, st.ID, st.Goal)
	}
	return st.Goal, nil
}

// editResult is what applyEdit did.
type editResult struct {
	// holder is the controller that was sent the edit; nil when the edit
	// was applied to state.json directly.
	holder *harness.LockInfo
	// changed reports that the idle task's state was changed.
	changed bool
	// oldLimits and iteration are those of the idle task before the edit.
	oldLimits harness.Limits
	iteration int
	// oldSandbox and newSandbox are set when the sandbox changed.
	oldSandbox, newSandbox *harness.Sandbox
	// oldHooks and newHooks are set when the hooks changed.
	oldHooks, newHooks *harness.Hooks
}

// applyEdit changes the goal (unless goal is ""), the limits, the sandbox
// and the hooks (unless nil) of task id: through control.json when a
// controller runs it, else in state.json, logged in progress-log.md.
func applyEdit(opts *EditOptions, store *harness.Store, id, goal string, sb *harness.Sandbox, hooks *harness.Hooks) (editResult, error) {
	now := opts.Now()
	var reqs []harness.ControlRequest
	if goal != "" {
		reqs = append(reqs, harness.ControlRequest{Kind: harness.ControlEdit, At: now, Goal: goal})
	}
	if !opts.Limits.Empty() {
		changes := opts.Limits
		reqs = append(reqs, harness.ControlRequest{Kind: harness.ControlLimits, At: now, Limits: &changes})
	}
	if sb != nil {
		reqs = append(reqs, harness.ControlRequest{Kind: harness.ControlSandbox, At: now, Sandbox: sb})
	}
	if hooks != nil {
		reqs = append(reqs, harness.ControlRequest{Kind: harness.ControlHooks, At: now, Hooks: hooks})
	}
	var (
		res           editResult
		edit          = harness.Edit{At: now}
		trustedBefore bool
	)
	holder, err := applyChange(store, id, now, taskChange{
		Idle: func(st *harness.State) (bool, error) {
			res.oldLimits, res.iteration = st.Limits, st.CurrentIteration
			// An edit of a trusted task keeps it trusted; one of a task
			// that is not (a clone's) does not make it so.
			tr, _ := store.TaskTrusted(st)
			trustedBefore = tr == harness.Trusted
			if st.Status == harness.StatusComplete {
				return false, usageErrorf("task %s is complete, so its goal and limits can no longer change", id)
			}
			sandboxChanged := sb != nil && !sameSandbox(*sb, st.Sandbox)
			hooksChanged := hooks != nil && *hooks != st.Hooks
			if goal == "" && harness.SameLimits(mergedLimits(st.Limits, opts.Limits), st.Limits) && !sandboxChanged && !hooksChanged {
				return false, nil
			}
			if hooksChanged {
				old := st.Hooks
				res.oldHooks, res.newHooks = &old, hooks
				edit.OldHooks, edit.NewHooks = &old, hooks
				st.Hooks = *hooks
			}
			if sandboxChanged {
				old := st.Sandbox
				res.oldSandbox, res.newSandbox = &old, sb
				edit.OldSandbox, edit.NewSandbox = &old, sb
				st.Sandbox = *sb
			}
			if goal != "" {
				edit.Goal = &harness.GoalChange{Old: st.Goal, New: goal}
				if err := store.SetGoal(st, goal); err != nil {
					return false, err
				}
			}
			opts.Limits.Apply(&st.Limits)
			res.changed = true
			return true, nil
		},
		AfterSave: func(st *harness.State) error {
			if trustedBefore {
				if err := store.TrustTask(st); err != nil {
					return err
				}
			}
			edit.OldLimits, edit.NewLimits = res.oldLimits, st.Limits
			return store.AppendProgress(id, harness.EditEntry(edit))
		},
		Requests: reqs,
	})
	res.holder = holder
	return res, err
}

// reportEdit tells the user what an edit did.
func reportEdit(opts *EditOptions, id, goal string, res editResult) {
	w := opts.IO.ErrOut
	if res.holder != nil {
		fmt.Fprintf(w, "requested edit of task %s (pid %d); it takes effect at the next turn boundary\n", id, res.holder.PID)
		if opts.Sandbox != nil {
			fmt.Fprintf(w, "task %s: the sandbox change is recorded at the next turn boundary and applies from the task's next run (grub resume); the current run keeps its sandbox\n", id)
		}
		return
	}
	if !res.changed {
		fmt.Fprintf(w, "task %s already has these settings; nothing changed\n", id)
		return
	}
	if goal != "" {
		fmt.Fprintf(w, "changed the goal of task %s; the next turn is told the objective was updated\n", id)
	}
	for _, line := range harness.LimitChangeLines(res.oldLimits, mergedLimits(res.oldLimits, opts.Limits)) {
		fmt.Fprintf(w, "task %s: %s\n", id, line)
	}
	if res.newSandbox != nil {
		fmt.Fprintf(w, "task %s: sandbox %s → %s\n", id, harness.SandboxSummary(*res.oldSandbox), harness.SandboxSummary(*res.newSandbox))
	}
	if res.newHooks != nil {
		for _, line := range harness.HookChangeLines(*res.oldHooks, *res.newHooks) {
			fmt.Fprintf(w, "task %s: %s\n", id, termsafe.Line(line))
		}
	}
	if m := opts.Limits.MaxIterations; m != nil && *m <= res.iteration {
		fmt.Fprintf(w, "note: task %s has already run %d iterations; grub resume will end it as failed (iteration budget spent) unless --max-iter is above %d\n", id, res.iteration, res.iteration)
	}
}

func mergedLimits(l harness.Limits, c harness.LimitChanges) harness.Limits {
	c.Apply(&l)
	return l
}

// editGoalInEditor lets the user edit the goal in their editor. An empty
// result aborts the edit (exit 2).
func editGoalInEditor(opts *EditOptions, id, current string) (string, error) {
	f, err := os.CreateTemp("", "grub-goal-"+id+"-*.md")
	if err != nil {
		return "", fmt.Errorf("creating a file to edit the goal in: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	_, werr := f.WriteString(current + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("writing %s: %w", path, werr)
	}
	if err := opts.Editor(opts, path); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the edited goal from %s: %w", path, err)
	}
	goal := strings.TrimSpace(string(data))
	if goal == "" {
		return "", &ExitError{Code: ExitUsage, Err: fmt.Errorf("the edited goal is empty; edit of task %s aborted, nothing changed", id)}
	}
	return goal, nil
}

// editorCommand is the user's editor: $EDITOR, else $VISUAL, else vi.
func editorCommand(getenv func(string) string) string {
	if e := userEditor(getenv); e != "" {
		return e
	}
	return "vi"
}

// userEditor is the editor the user set, $EDITOR else $VISUAL; "" when
// neither is set.
func userEditor(getenv func(string) string) string {
	for _, name := range []string{"EDITOR", "VISUAL"} {
		if e := strings.TrimSpace(getenv(name)); e != "" {
			return e
		}
	}
	return ""
}

// runEditor opens path in the user's editor through sh, so an editor
// setting with arguments ("code --wait") works, and waits for it. Without
// a terminal and without $EDITOR or $VISUAL it starts nothing (vi would
// wait on a terminal that is not there): a usage error says what to do.
func runEditor(opts *EditOptions, path string) error {
	if !opts.IO.InTTY && userEditor(opts.Getenv) == "" {
		return usageErrorf("no editor to write the new goal in: there is no terminal and $EDITOR is not set; give it with --goal (grub edit --goal \"<new goal>\") or set $EDITOR")
	}
	editor := editorCommand(opts.Getenv)
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "grub-editor", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	if err := cmd.Run(); err != nil {
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("editor %q failed: %v; nothing changed (set $EDITOR to the editor you use)", editor, err)}
	}
	return nil
}
