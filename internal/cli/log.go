package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/spf13/cobra"
)

// LogOptions are the inputs of grub log.
type LogOptions struct {
	IO    *IOStreams
	Store func() (*harness.Store, error)

	ID string
}

// NewCmdLog builds grub log. runF, when not nil, replaces the run function
// (tests use it to check flag parsing).
func NewCmdLog(f *Factory, runF func(*LogOptions) error) *cobra.Command {
	opts := &LogOptions{IO: f.IO, Store: f.Store}
	return &cobra.Command{
		Use:   "log [<id>]",
		Short: "Print a task's progress log",
		Long: `Print progress-log.md of a task on stdout: one entry per turn (what the
agent did, the feature it worked on, its decision, what grub verified) and a
record of every edit of the goal. Without <id>, the most recently updated
task.

The log is meant to be committed: git log -p .grub/<id>/progress-log.md
shows how it grew.`,
		Example: `  grub log
  grub log 0a1b2c3d | less
  git log -p .grub/0a1b2c3d/progress-log.md`,
		Args:              taskIDArg,
		ValidArgsFunction: completeTaskIDs(f),
		RunE:              idRunE(opts, &opts.ID, runF, logRun),
	}
}

func logRun(opts *LogOptions) error {
	store, id, err := openTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	path := store.Path(id, harness.FileProgressLog)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(opts.IO.ErrOut, "task %s has no progress log yet (%s); it gets one after its first turn\n", id, store.Rel(path))
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	// The log holds the agent's summaries and the user's guidance: their
	// control characters are escaped, line by line (a line never splits a
	// UTF-8 character).
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if _, werr := io.WriteString(opts.IO.Out, termsafe.Escape(line)); werr != nil {
			return werr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", store.Rel(path), err)
		}
	}
}
