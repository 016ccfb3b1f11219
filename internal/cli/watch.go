package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

// clearScreen moves the cursor home and clears a terminal, between the
// frames of grub status --watch.
const clearScreen = "\x1b[H\x1b[2J"

// minWatchInterval is the shortest --interval grub status --watch takes.
const minWatchInterval = 100 * time.Millisecond

// sleepCtx waits for d or until ctx is done, whichever comes first, and
// returns ctx's error in the second case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchStatus is grub status --watch: it shows the task's status every
// interval until no controller runs the task (it stopped and its runner
// exited, or the runner died), then exits as plain status would. On a
// terminal it redraws the whole screen each time; otherwise it prints a
// frame only when the task changed, frames separated by a blank line, and
// with --json one JSON object per line (NDJSON). Ctrl-C ends the watch
// (see watchInterrupted).
func watchStatus(opts *StatusOptions, store *harness.Store, id string) error {
	ctx, stop := signal.NotifyContext(ctxOr(opts.Ctx), os.Interrupt)
	defer stop()
	sleep := opts.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}

	var last []byte
	var lastView *taskView
	for {
		v, err := loadWatchView(store, id)
		var bad *schemas.Error
		if errors.As(err, &bad) && lastView != nil && lastView.Held {
			// An agent scribbled on state.json mid-turn; its runner will
			// restore the file. Keep watching, and say so only if it stays
			// broken once the runner is gone.
			if _, held, herr := store.Holder(id); herr == nil && held {
				if err := sleep(ctx, opts.Interval); err != nil {
					return watchInterrupted(ctx, opts, err)
				}
				continue
			}
		}
		if err != nil {
			return err
		}
		lastView = v
		key, err := statusLine(v)
		if err != nil {
			return err
		}
		changed := !bytes.Equal(key, last)
		// A controller saves the final status before it commits the turn
		// and releases the lock: the watch ends when the runner is gone,
		// so that what comes after it sees the finished task.
		final := !v.Held
		// While a runner works, the agent may be halfway through writing
		// feature-list.json; only a list still broken at the end is worth
		// a warning.
		if final && v.FeatureNote != "" {
			fmt.Fprintf(opts.IO.ErrOut, "grub: warning: %s\n", v.FeatureNote)
		}

		switch {
		case opts.JSON:
			if changed {
				_, err = opts.IO.Out.Write(key)
			}
		case opts.IO.OutTTY:
			// Every frame, so that "5m ago" and the runner's age stay
			// current.
			var b bytes.Buffer
			b.WriteString(clearScreen)
			if err = printStatus(&b, v, opts.Now()); err == nil {
				_, err = opts.IO.Out.Write(b.Bytes())
			}
		case changed:
			if last != nil {
				if _, err = io.WriteString(opts.IO.Out, "\n"); err != nil {
					return err
				}
			}
			err = printStatus(opts.IO.Out, v, opts.Now())
		}
		if err != nil {
			return err
		}
		last = key

		if final {
			if opts.ExitStatus {
				if code := statusExitCode(v); code != ExitOK {
					return &ExitError{Code: code}
				}
			}
			return nil
		}
		if err := sleep(ctx, opts.Interval); err != nil {
			return watchInterrupted(ctx, opts, err)
		}
	}
}

// watchInterrupted ends a watch that Ctrl-C (or a cancelled context)
// stopped: the user has seen enough, exit 0, except that with
// --exit-status the task has not reached a status to report, so exit 130
// keeps a `watch --exit-status && next-step` chain from going on.
func watchInterrupted(ctx context.Context, opts *StatusOptions, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if opts.ExitStatus {
		return &ExitError{Code: ExitInterrupted}
	}
	return nil
}

// loadWatchView reads the task as status does. A task that looks running
// without a runner is read once more: a controller saves its final state
// before it releases the lock, so a runner that finished between the two
// reads shows as finished, not as interrupted.
func loadWatchView(store *harness.Store, id string) (*taskView, error) {
	for attempt := 1; ; attempt++ {
		st, err := store.LoadState(id)
		if err != nil {
			return nil, err
		}
		v, err := loadTaskView(store, st)
		if err != nil || !v.Interrupted() || attempt == 2 {
			return v, err
		}
	}
}

// statusLine is the task's --json status on one line, newline included: a
// line of grub status --watch --json, and what the watch compares to tell
// whether the task changed. It is checked against its schema like every
// --json output.
func statusLine(v *taskView) ([]byte, error) {
	return encodeJSON(schemas.StatusOutput, newStatusOutput(v), false)
}
