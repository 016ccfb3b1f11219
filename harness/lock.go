package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// LockRole says what kind of process holds a task's lock.
type LockRole string

// The holders of a task's lock. A runner (a controller: grub start, resume,
// answer, demo) holds it for a whole run and reads control.json at every
// turn boundary; a short-lived command (pause, stop, edit, steer, doctor,
// the agent change of resume) holds it for a moment to change state.json
// and never reads control.json, so a request must never be queued for one.
const (
	RoleRunner  LockRole = "runner"
	RoleCommand LockRole = "command"
)

// LockInfo is the content of a task's lock file: who holds, or last held,
// the lock.
type LockInfo struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"startedAt"`
	// Role is what kind of process the holder is. A record without one
	// was written by a grub from before roles, and is taken as a runner's.
	Role LockRole `json:"role,omitempty"`
	// AgentPGID is the process group of the agent the holder is running,
	// 0 when none. A dead holder leaves it behind, so that the next
	// controller can end that agent before starting its own.
	AgentPGID int `json:"agentPgid,omitempty"`
	// AgentStart is the start time of the agent group's leader (the
	// process whose id is AgentPGID; clock ticks since boot, as
	// /proc/<pid>/stat gives it), so that a group id used again by another
	// process after the agent is gone (a reboot) is not taken for it; 0
	// when not known.
	AgentStart uint64 `json:"agentStart,omitempty"`
	// Processes are grub's child processes seen during the current turn
	// (an agent's helper, a daemon it detached and grub adopted as a
	// subreaper), with their start times. A dead holder leaves them
	// behind like AgentPGID, for the next controller to end.
	Processes []ProcessRef `json:"processes,omitempty"`
}

// Runner reports whether the record is a runner's (or predates roles):
// the holder a request in control.json is for.
func (i LockInfo) Runner() bool { return i.Role != RoleCommand }

// ProcessRef names one process across pid reuse: its pid and its start
// time (field 22 of /proc/<pid>/stat).
type ProcessRef struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// Lock is a held task lock: an advisory flock on .grub/<id>/lock. The lock
// file is never deleted (deleting it would let two processes lock two
// different files of the same name).
type Lock struct {
	mu   sync.Mutex
	f    *os.File
	id   string
	info LockInfo
	prev LockInfo
}

// lockAttempts and lockRetryDelay ride out Holder probes: a probe takes a
// shared lock for an instant, which must not make a starting controller
// believe the task is running.
const (
	lockAttempts   = 5
	lockRetryDelay = 20 * time.Millisecond
)

// ShortHolderWait is how long Lock and LockRunner wait for a short-lived
// command (RoleCommand) to release a task's lock before giving up with a
// *LockedError: such a holder keeps it for milliseconds. A runner's lock
// is not waited for. Tests shorten it.
var ShortHolderWait = 3 * time.Second

// shortHolderDelay is the pause between two attempts while a short-lived
// command holds the lock.
const shortHolderDelay = 25 * time.Millisecond

// Lock takes the lock of task id for a short-lived command (RoleCommand):
// a change to state.json made in a moment. Another short-lived holder is
// waited for, up to ShortHolderWait; a runner is not. If a live process
// still holds the lock, the error is a *LockedError naming that process
// and its role.
func (s *Store) Lock(id string) (*Lock, error) { return s.lock(id, RoleCommand) }

// LockRunner takes the lock of task id for a runner (RoleRunner): a
// controller that holds it for a whole run and applies the requests
// queued in control.json. It waits for a short-lived holder as Lock does.
func (s *Store) LockRunner(id string) (*Lock, error) { return s.lock(id, RoleRunner) }

func (s *Store) lock(id string, role LockRole) (*Lock, error) {
	if err := s.checkTask(id); err != nil {
		return nil, err
	}
	path := s.Path(id, FileLock)
	f, err := s.openLockFile(id, FileLock)
	if err != nil {
		return nil, fmt.Errorf("lock task %s: %w", id, err)
	}
	if err := waitLock(f, path, s.HostName()); err != nil {
		f.Close()
		if le, ok := err.(*LockedError); ok {
			le.ID = id
			return nil, le
		}
		return nil, fmt.Errorf("lock %s: %w", s.Rel(path), err)
	}
	host := s.HostName()
	prev := readLockInfo(path, false)
	// An agent a dead runner left behind stays on record until a
	// controller has ended it (SetAgentPGID(0)): a short-lived holder such
	// as grub pause must not make it forgotten.
	l := &Lock{f: f, id: id, prev: prev, info: LockInfo{PID: os.Getpid(), Host: host, Role: role,
		StartedAt: time.Now().UTC().Truncate(time.Second), AgentPGID: prev.AgentPGID, AgentStart: prev.AgentStart, Processes: prev.Processes}}
	if err := l.writeInfo(); err != nil {
		unlock(f)
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", s.Rel(path), err)
	}
	return l, nil
}

// waitLock takes the exclusive flock on f. It rides out Holder probes
// (lockAttempts), and waits up to ShortHolderWait while the holder is a
// short-lived command, or while the record names a runner of this host
// (host) that is gone: then what holds the file is a process the runner
// started in its last moment, between its fork and its exec (a child
// holds the runner's files until it execs), about to let go. A holder
// still there is a *LockedError (without the task id).
func waitLock(f *os.File, path, host string) error {
	var deadline time.Time
	for attempt := 1; ; attempt++ {
		ok, err := tryLock(f, true)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if attempt < lockAttempts {
			time.Sleep(lockRetryDelay)
			continue
		}
		info := readLockInfo(path, true)
		if info.Runner() && !(info.Host == host && processGone(info.PID)) {
			return &LockedError{Info: info}
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(ShortHolderWait)
		}
		if time.Now().After(deadline) {
			return &LockedError{Info: info}
		}
		time.Sleep(shortHolderDelay)
	}
}

// ID is the task the lock belongs to.
func (l *Lock) ID() string { return l.id }

// Info is what the lock file says about this holder.
func (l *Lock) Info() LockInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// Previous is what the lock file said when this lock was taken: the last
// holder. A non-zero AgentPGID there is an agent a dead runner left behind,
// which the new holder must end before it starts its own.
func (l *Lock) Previous() LockInfo { return l.prev }

// SetAgentPGID records the process group of the agent now running (0: none)
// in the lock file.
func (l *Lock) SetAgentPGID(pgid int) error { return l.SetAgent(pgid, 0) }

// SetAgent records the process group of the agent now running and its
// leader's start time (see LockInfo.AgentStart); pgid 0 clears both.
func (l *Lock) SetAgent(pgid int, start uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("task %s: lock already released", l.id)
	}
	if pgid == 0 {
		start = 0
	}
	if l.info.AgentPGID == pgid && l.info.AgentStart == start {
		return nil // on record already: no write
	}
	l.info.AgentPGID, l.info.AgentStart = pgid, start
	return l.writeInfo()
}

// SetProcesses records the processes a dead runner's successor must end
// (nil: none) in the lock file.
func (l *Lock) SetProcesses(refs []ProcessRef) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("task %s: lock already released", l.id)
	}
	if len(refs) == 0 && len(l.info.Processes) == 0 {
		return nil // none on record already: no write, no fsync
	}
	l.info.Processes = refs
	return l.writeInfo()
}

// writeInfo rewrites the lock file in place through the locked descriptor.
// The caller holds l.mu (or owns l exclusively). It is not fsynced: the
// record describes processes, which a crash of the machine ends with it,
// while a crash of grub leaves the written record in the page cache for
// the next run to read.
func (l *Lock) writeInfo() error {
	data, err := json.Marshal(l.info)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt(data, 0)
	return err
}

// Release unlocks. The file stays, with the agent process group still on
// record if the holder did not clear it. Releasing twice is harmless.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	werr := l.writeInfo()
	uerr := unlock(l.f)
	cerr := l.f.Close()
	l.f = nil
	if err := errors.Join(werr, uerr, cerr); err != nil {
		return fmt.Errorf("release lock of task %s: %w", l.id, err)
	}
	return nil
}

// Holder reports whether a live process holds the lock of task id, and
// what the lock file says (when not held: the last holder, including any
// agent process group a dead runner left behind). It probes with a shared
// lock on its own descriptor and drops it at once. A lock whose record
// names a runner of this host that is gone is not held, whatever still
// has the file open for a moment.
func (s *Store) Holder(id string) (info LockInfo, held bool, err error) {
	if err := s.checkTask(id); err != nil {
		return LockInfo{}, false, err
	}
	path := s.Path(id, FileLock)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LockInfo{}, false, nil
	}
	if err != nil {
		return LockInfo{}, false, fmt.Errorf("probe %s: %w", s.Rel(path), err)
	}
	defer f.Close()
	ok, err := tryLock(f, false)
	if err != nil {
		return LockInfo{}, false, fmt.Errorf("probe %s: %w", s.Rel(path), err)
	}
	if ok {
		if err := unlock(f); err != nil {
			return LockInfo{}, false, fmt.Errorf("probe %s: %w", s.Rel(path), err)
		}
	}
	info = readLockInfo(path, !ok)
	if !ok && info.Runner() && info.Host == s.HostName() && processGone(info.PID) {
		// The runner is gone; what holds the file is a child it started in
		// its last moment, about to let go (see waitLock): nobody runs the
		// task, and Lock waits for the file.
		return info, false, nil
	}
	return info, !ok, nil
}

// readLockInfo decodes the lock file. A holder writes it just after taking
// the lock, so when held is set an empty or partial file is read again a
// few times. An unreadable file gives a zero LockInfo: the content is
// informative only, the flock is the truth.
func readLockInfo(path string, held bool) LockInfo {
	for attempt := 1; ; attempt++ {
		data, err := os.ReadFile(path)
		var info LockInfo
		if err == nil && json.Unmarshal(data, &info) == nil {
			return info
		}
		if !held || attempt == lockAttempts {
			return LockInfo{}
		}
		time.Sleep(lockRetryDelay)
	}
}

// checkTask returns a *NotFoundError unless id is a task folder.
func (s *Store) checkTask(id string) error {
	if !ValidID(id) {
		return s.notFound(id)
	}
	fi, err := os.Stat(s.Dir(id))
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
		return s.notFound(id)
	}
	if err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	return nil
}
