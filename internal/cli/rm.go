package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
)

// RmOptions are the inputs of grub rm.
type RmOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)

	ID  string
	Yes bool
}

// NewCmdRm builds grub rm. runF, when not nil, replaces the run function
// (tests use it to check flag parsing).
func NewCmdRm(f *Factory, runF func(*RmOptions) error) *cobra.Command {
	opts := &RmOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "rm <id> [--yes]",
		Short: "Remove a task that is not running: its folder in .grub and its private folder",
		Long: `Remove a task that no grub runs: its folder .grub/<id>/ and its private
folder (the control queue, the trust record, the copies the referee keeps,
under $XDG_STATE_HOME/grub or ~/.local/state/grub). A task a runner holds is
refused (exit 75): stop it first (grub stop <id>) and let the run end. A
damaged task is removed like any other.

On a terminal rm asks first; --yes removes without asking, and without a
terminal --yes is needed (exit 2 otherwise).

Nothing in git changes: the task's commits stay on their branch (git log
--grep 'Grub-Task: <id>' finds them). Its files that were committed are
deleted from the work tree, which git status then shows; grub's later
commits leave them as they are in git. git checkout -- .grub/<id> brings
them back.`,
		Example: `  grub rm 0a1b2c3d
  grub rm 0a1b2c3d --yes`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &UsageError{Err: fmt.Errorf("grub rm takes one task id (grub list shows them), got %d arguments", len(args)), Command: cmd.CommandPath()}
			}
			return nil
		},
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              idRunE(opts, &opts.ID, runF, rmRun),
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "remove without asking (needed without a terminal)")
	return cmd
}

func rmRun(opts *RmOptions) error {
	if strings.TrimSpace(opts.ID) == "" {
		return usageErrorf("grub rm takes a task id (grub list shows them)")
	}
	store, id, err := openTask(opts.Store, opts.ID)
	var nf *harness.NotFoundError
	if errors.As(err, &nf) {
		store, id, err = leftTask(opts.Store, opts.ID, err)
	}
	if err != nil {
		return err
	}
	if info, held, err := store.Holder(id); err != nil {
		return err
	} else if held && info.Runner() {
		return &harness.LockedError{ID: id, Info: info}
	}
	if !opts.Yes {
		ok, err := confirmRm(opts.IO, store, id)
		if err != nil || !ok {
			return err
		}
	}
	removed, err := store.RemoveTask(id)
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	fmt.Fprintf(w, "removed task %s: %s", id, removed.Dir)
	if removed.Private != "" {
		fmt.Fprintf(w, " and its private folder %s", termsafe.Line(removed.Private))
	}
	fmt.Fprintln(w)
	sayRmGit(w, store, id)
	return nil
}

// sayRmGit says, in a git repository, that the task's commits stay and,
// when its committed files are now missing from the work tree, how git
// shows them and how to bring them back.
func sayRmGit(w io.Writer, store *harness.Store, id string) {
	repo, err := openRepo(store.Root)
	if err != nil || repo == nil {
		return
	}
	fmt.Fprintf(w, "its commits stay in git (git log --grep 'Grub-Task: %s')\n", id)
	dirty, err := repo.Dirty()
	if err != nil {
		return
	}
	prefix := path.Join(harness.GrubDirName, id) + "/" // Dirty's paths are the workspace's
	for _, p := range dirty {
		if strings.HasPrefix(p, prefix) {
			fmt.Fprintf(w, "git status shows its committed files as deleted: commit that, or bring them back with git checkout -- %s\n", store.Rel(store.Dir(id)))
			return
		}
	}
}

// confirmRm asks on the terminal whether to remove task id; without a
// terminal it is a usage error that asks for --yes.
func confirmRm(ios *IOStreams, store *harness.Store, id string) (bool, error) {
	if !ios.InTTY {
		return false, usageErrorf("grub rm %s: no terminal to ask on; pass --yes to remove the task", id)
	}
	what := "no state.json: damaged, or what git left of it"
	if st, err := store.LoadState(id); err == nil {
		what = fmt.Sprintf("%s: %s", st.Status, oneLine(st.Goal, 60))
	}
	fmt.Fprintf(ios.ErrOut, "Remove task %s (%s): %s and its private folder? Its commits stay. [y/N] ", id, termsafe.Line(what), store.Rel(store.Dir(id)))
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(ios.ErrOut)
		return false, usageErrorf("grub rm %s: no answer; nothing removed", id)
	}
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintf(ios.ErrOut, "nothing removed\n")
		return false, nil
	}
	return true, nil
}

// leftTask is, for an id that names no task (notFound), the folder of one
// that is no longer a task but is still there: what git left of it after
// its commits were undone (the lock, turns/), named by its whole id.
func leftTask(open func() (*harness.Store, error), id string, notFound error) (*harness.Store, string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	store, err := open()
	if err != nil || !harness.ValidID(id) {
		return nil, "", notFound
	}
	if fi, err := os.Lstat(store.Dir(id)); err != nil || !fi.IsDir() {
		return nil, "", notFound
	}
	return store, id, nil
}
