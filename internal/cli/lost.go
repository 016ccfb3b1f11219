package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/grub-dev/grub/harness"
)

// findLostTask brings a task back whose state.json a turn's reset took
// off the work tree before a crash (harness.Store.LostTask): grub's
// private folder registers it and notes grub's last turn commit, whose
// state.json is written again (RecoverLostState). The run's recovery then
// puts the history back as at the end of a turn. id "" looks at every
// task of the workspace, taking the one lost when it is the only one.
// Nothing happens for a task that is not lost; a lost one that cannot be
// read back from git is an error.
func findLostTask(open func() (*harness.Store, error), id string, w io.Writer, now func() time.Time) error {
	home, err := open()
	if err != nil {
		return nil // loadTask says it
	}
	ids := []string{strings.TrimSpace(id)}
	if ids[0] == "" {
		if _, err := home.Resolve(""); err == nil {
			return nil // a task to resume is there
		}
		if ids = home.LostTasks(); len(ids) != 1 {
			return nil
		}
	}
	n, ok := home.LostTask(ids[0])
	if !ok {
		return nil
	}
	repo, err := openRepo(home.Root)
	if err != nil || repo == nil {
		return err
	}
	rel := home.Rel(home.Path(ids[0], harness.FileState))
	data, err := repo.FileAt(n.Mark.Commit, rel)
	if err != nil {
		return fmt.Errorf("task %s lost its %s (was the branch reset?), and grub's last turn commit, which its private folder names, cannot give it back: %w", ids[0], rel, err)
	}
	list, err := repo.FileAt(n.Mark.Commit, home.Rel(home.Path(ids[0], harness.FileFeatureList)))
	if err != nil {
		list = nil // an initializer's commit holds none yet
	}
	st, err := home.RecoverLostState(ids[0], n, data, list, now())
	if err != nil {
		return err
	}
	how := "the task goes on from there"
	if st.AwaitingTurn {
		how = fmt.Sprintf("turn %d, cut short, is recovered as a turn of unknown outcome", st.CurrentIteration)
	}
	fmt.Fprintf(w, "grub: task %s: %s was gone from the work tree (was the branch reset?); took it back from grub's last turn commit %s, as grub's private folder notes it (limits and settings changed since are as that commit holds them); %s\n",
		ids[0], rel, short(n.Mark.Commit), how)
	return nil
}
