package harness

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoTasks is matched (errors.Is) by the error Resolve returns when the
// workspace has no task yet.
var ErrNoTasks = errors.New("no grub task")

// noTasksError names the workspace and says what to do.
type noTasksError struct{ root string }

func (e *noTasksError) Error() string {
	return fmt.Sprintf("no grub task in %s: run grub start \"<goal>\" first", e.root)
}

func (e *noTasksError) Is(target error) bool { return target == ErrNoTasks }

// NotFoundError is an id that names no task, or a prefix that names more
// than one (Matches).
type NotFoundError struct {
	ID      string
	Known   []string // every task id in the workspace, sorted
	Matches []string // set when ID is a prefix of several ids
}

func (e *NotFoundError) Error() string {
	if len(e.Matches) > 1 {
		return fmt.Sprintf("task id %q is ambiguous: it starts %s; give more characters", e.ID, strings.Join(e.Matches, ", "))
	}
	if len(e.Known) == 0 {
		return fmt.Sprintf("no grub task %q: there are no tasks in this workspace; run grub start \"<goal>\" first", e.ID)
	}
	return fmt.Sprintf("no grub task %q: known tasks are %s; run grub list", e.ID, strings.Join(e.Known, ", "))
}

// LockedError is a lock held by another live process: a runner, or a
// short-lived command that did not let go in time (Info.Role).
type LockedError struct {
	ID   string
	Info LockInfo
}

func (e *LockedError) Error() string {
	who := "another grub process"
	if e.Info.PID > 0 {
		who = fmt.Sprintf("pid %d", e.Info.PID)
		if e.Info.Host != "" {
			who += " on " + e.Info.Host
		}
	}
	since := ""
	if !e.Info.StartedAt.IsZero() {
		since = ", since " + e.Info.StartedAt.Local().Format("2006-01-02 15:04:05 MST")
	}
	if !e.Info.Runner() {
		return fmt.Sprintf("task %s is busy: a short-lived grub command (%s%s) holds its lock; try again in a moment", e.ID, who, since)
	}
	return fmt.Sprintf("task %s is already running (%s%s): use grub status %s, or grub pause/stop %s", e.ID, who, since, e.ID, e.ID)
}

// NotRegularError is a referee's file (feature-list.json, init.sh) that is
// there but is not a regular file: a symbolic link (even to a valid file),
// a folder, a fifo. The referee counts it as an illegal edit and restores a
// regular file.
type NotRegularError struct {
	File string // the path relative to the workspace root
	Kind string // what is there instead: "a symbolic link", "a folder", …
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file; grub's files in the harness folder must be regular files", e.File, e.Kind)
}
