package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/schemas"
)

// ControlKind is what a control request asks of a running controller.
type ControlKind string

// The control requests other grub processes queue for a running controller.
const (
	ControlPause    ControlKind = "pause"
	ControlPauseNow ControlKind = "pause-now"
	ControlStop     ControlKind = "stop"
	ControlEdit     ControlKind = "edit"   // Goal holds the new goal
	ControlLimits   ControlKind = "limits" // Limits holds the changes
	ControlSteer    ControlKind = "steer"  // Message holds the user's guidance
	// ControlSandbox: Sandbox holds the new sandbox settings, recorded
	// at once and applied from the task's next run.
	ControlSandbox ControlKind = "sandbox"
	// ControlHooks: Hooks holds the task's new hooks, used from the next
	// turn on.
	ControlHooks ControlKind = "hooks"
)

// ControlRequest is one request in control.json.
type ControlRequest struct {
	Kind    ControlKind   `json:"kind"`
	At      time.Time     `json:"at"`
	Goal    string        `json:"goal,omitempty"`
	Message string        `json:"message,omitempty"`
	Limits  *LimitChanges `json:"limits,omitempty"`
	Sandbox *Sandbox      `json:"sandbox,omitempty"`
	Hooks   *Hooks        `json:"hooks,omitempty"`
}

// check reports a request that lacks what its kind needs.
func (r ControlRequest) check() error {
	switch r.Kind {
	case ControlPause, ControlPauseNow, ControlStop:
	case ControlEdit:
		if strings.TrimSpace(r.Goal) == "" {
			return errors.New("control request edit: the new goal is empty")
		}
	case ControlSteer:
		if strings.TrimSpace(r.Message) == "" {
			return fmt.Errorf("control request %s: the message is empty", r.Kind)
		}
	case ControlLimits:
		if r.Limits == nil || r.Limits.Empty() {
			return errors.New("control request limits: no limit to change")
		}
	case ControlSandbox:
		if r.Sandbox == nil {
			return errors.New("control request sandbox: no sandbox settings")
		}
	case ControlHooks:
		if r.Hooks == nil {
			return errors.New("control request hooks: no hook settings")
		}
	default:
		return fmt.Errorf("control request: unknown kind %q", r.Kind)
	}
	return nil
}

// controlVersion is the control.json format version.
const controlVersion = 1

// controlFile is the content of control.json.
type controlFile struct {
	Version  int              `json:"version"`
	Requests []ControlRequest `json:"requests"`
}

// The control channel of a task (control.json and its control.lock) lives
// in the task's private folder (PrivateDir), outside the workspace: only
// the user's grub processes write it. Nothing a turn runs can reach it
// there: the sandbox does not let a command write outside the workspace
// (and makes the private folder read-only where it lies under a path a
// command may write), and the built-in agent's tools are confined to the
// workspace. A control.json in the task folder (.grub/<id>/, where older
// versions kept it and where the agent can write) is never read.

// ControlPath is where the control requests of task id wait:
// control.json in the task's private folder. It makes no folder.
func (s *Store) ControlPath(id string) (string, error) {
	dir, err := s.privatePath(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, FileControl), nil
}

// AppendControl queues r for the controller of task id. It fills r.At when
// zero. Concurrent appenders and TakeControl are serialised by an flock on
// control.lock; control.json is written atomically and validated first. A
// corrupt control.json is reported (*schemas.Error), never overwritten.
// Without a private folder it is ErrNoPrivate.
func (s *Store) AppendControl(id string, r ControlRequest) error {
	if err := r.check(); err != nil {
		return err
	}
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	return s.withControlLock(id, true, func(path string) error {
		cf, err := s.readControl(path)
		if err != nil {
			return err
		}
		cf.Requests = append(cf.Requests, r)
		return s.writeControl(path, cf)
	})
}

// TakeControl returns the queued requests of task id, oldest first, and
// clears the queue by removing control.json (no file: no requests). A
// corrupt control.json is a *schemas.Error and is left in place.
func (s *Store) TakeControl(id string) ([]ControlRequest, error) {
	var reqs []ControlRequest
	err := s.withControlLock(id, false, func(path string) error {
		cf, err := s.readControl(path)
		if err != nil {
			return err
		}
		reqs = cf.Requests
		if len(reqs) == 0 {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear %s: %w", path, err)
		}
		return atomicfile.SyncDir(filepath.Dir(path))
	})
	return reqs, err
}

// PeekControl returns the queued requests of task id without taking them.
func (s *Store) PeekControl(id string) ([]ControlRequest, error) {
	var reqs []ControlRequest
	err := s.withControlLock(id, false, func(path string) error {
		cf, err := s.readControl(path)
		reqs = cf.Requests
		return err
	})
	return reqs, err
}

// withControlLock runs fn, with the path of control.json, holding the
// flock on the task's control.lock (both in the private folder). A task
// without a private folder (one no grub of this user ran here: its
// runner registers it) has no requests: fn is not called, and with
// create (a request to queue) that is an error. No folder is made:
// neither reading nor queueing registers a task.
func (s *Store) withControlLock(id string, create bool, fn func(path string) error) error {
	if err := s.checkTask(id); err != nil {
		return err
	}
	path, err := s.ControlPath(id)
	if err != nil {
		return err
	}
	if !s.Registered(id) {
		if create {
			return fmt.Errorf("task %s has no private folder (%s): its runner is not a grub of this user on this machine, so no request was queued", id, filepath.Dir(path))
		}
		return nil
	}
	lockPath := filepath.Join(filepath.Dir(path), FileControlLock)
	if _, err := removeNonRegular(lockPath, 0); err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	f, err := s.openOwnFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600, "")
	if err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	defer f.Close()
	if err := lockWait(f); err != nil {
		return fmt.Errorf("lock %s: %w", lockPath, err)
	}
	defer unlock(f)
	return fn(path)
}

// readControl reads and validates the control.json at path; a missing
// file is an empty queue.
func (s *Store) readControl(path string) (controlFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return controlFile{Version: controlVersion}, nil
	}
	if err != nil {
		return controlFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	var cf controlFile
	if err := schemas.DecodeInto(schemas.Control, path, data, &cf); err != nil {
		return controlFile{}, err
	}
	return cf, nil
}

// writeControl validates cf and writes it atomically to path.
func (s *Store) writeControl(path string, cf controlFile) error {
	cf.Version = controlVersion
	data, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	data = append(data, '\n')
	if err := schemas.Validate(schemas.Control, path, data); err != nil {
		return err
	}
	if _, err := removeNonRegular(path, 0o600); err != nil {
		return fmt.Errorf("remove %s to write it: %w", path, err)
	}
	return atomicfile.WriteFile(path, data, 0o600)
}

// OldControlFile reports whether task id's folder holds a control.json,
// where grub kept its control requests before they moved to the private
// folder: nothing reads it (the agent could write it), and doctor says
// so.
func (s *Store) OldControlFile(id string) bool {
	_, err := os.Lstat(s.Path(id, FileControl))
	return err == nil
}

// SetAsideControl renames task id's control.json (in the private folder)
// to control.json.damaged-<time> beside it, for grub doctor --repair, and
// returns where it went; no file: "".
func (s *Store) SetAsideControl(id string, now time.Time) (string, error) {
	path, err := s.ControlPath(id)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	to := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	if err := os.Rename(path, to); err != nil {
		return "", fmt.Errorf("set %s aside: %w", path, err)
	}
	return to, atomicfile.SyncDir(filepath.Dir(path))
}
