package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/grub-dev/grub/harness"
)

// taskChange is a change to a task made by pause, stop or edit.
type taskChange struct {
	// Idle changes the state when no controller runs the task; it is
	// called under the task's lock with a freshly loaded state and
	// reports whether the state must be saved.
	Idle func(st *harness.State) (save bool, err error)
	// AfterSave runs under the lock after the state was saved (edit uses
	// it to append to the progress log).
	AfterSave func(st *harness.State) error
	// Requests are appended to control.json when a controller runs the
	// task; it applies them at its next turn boundary.
	Requests []harness.ControlRequest
}

// applyChange makes a change to task id. When a runner (a controller)
// holds the task's lock the change's requests are queued in control.json
// and the holder is returned; otherwise the change is applied to state.json
// under the lock and the returned holder is nil. A short-lived command
// holding the lock is waited for (harness.ShortHolderWait), never queued
// for: nothing would read the request until the next run, which would then
// apply it over whatever changed in between. One that does not let go in
// time is a *harness.LockedError (exit 75).
func applyChange(store *harness.Store, id string, now time.Time, c taskChange) (holder *harness.LockInfo, err error) {
	lock, err := store.Lock(id)
	var locked *harness.LockedError
	if errors.As(err, &locked) && locked.Info.Runner() {
		for _, r := range c.Requests {
			if r.At.IsZero() {
				r.At = now
			}
			if err := store.AppendControl(id, r); err != nil {
				return nil, err
			}
		}
		info := locked.Info
		return &info, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("releasing the lock of task %s: %w", id, rerr)
		}
	}()

	st, err := store.LoadState(id)
	if err != nil {
		return nil, err
	}
	save, err := c.Idle(st)
	if err != nil || !save {
		return nil, err
	}
	st.UpdatedAt = now.UTC()
	if err := store.SaveState(st); err != nil {
		return nil, err
	}
	if c.AfterSave != nil {
		if err := c.AfterSave(st); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
