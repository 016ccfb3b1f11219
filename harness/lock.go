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

// LockInfo is the content of a task's lock file: who holds, or last held,
// the lock.
type LockInfo struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"startedAt"`
	// AgentPGID is the process group of the agent the holder is running,
	// 0 when none. A dead holder leaves it behind, so that the next
	// controller can end that agent before starting its own.
	AgentPGID int `json:"agentPgid,omitempty"`
	// Processes are grub's child processes seen during the current turn
	// (an agent's helper, a daemon it detached and grub adopted as a
	// subreaper), with their start times. A dead holder leaves them
	// behind like AgentPGID, for the next controller to end.
	Processes []ProcessRef `json:"processes,omitempty"`
}

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

// Lock takes the lock of task id without waiting. If a live process holds
// it, the error is a *LockedError naming that process.
func (s *Store) Lock(id string) (*Lock, error) {
	if err := s.checkTask(id); err != nil {
		return nil, err
	}
	path := s.Path(id, FileLock)
	f, err := s.openLockFile(id, FileLock)
	if err != nil {
		return nil, fmt.Errorf("lock task %s: %w", id, err)
	}
	for attempt := 1; ; attempt++ {
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", s.Rel(path), err)
		}
		if ok {
			break
		}
		if attempt == lockAttempts {
			f.Close()
			return nil, &LockedError{ID: id, Info: readLockInfo(path, true)}
		}
		time.Sleep(lockRetryDelay)
	}
	host, _ := os.Hostname()
	prev := readLockInfo(path, false)
	// An agent a dead runner left behind stays on record until a
	// controller has ended it (SetAgentPGID(0)): a short-lived holder such
	// as grub pause must not make it forgotten.
	l := &Lock{f: f, id: id, prev: prev, info: LockInfo{PID: os.Getpid(), Host: host,
		StartedAt: time.Now().UTC().Truncate(time.Second), AgentPGID: prev.AgentPGID, Processes: prev.Processes}}
	if err := l.writeInfo(); err != nil {
		unlock(f)
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", s.Rel(path), err)
	}
	return l, nil
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
func (l *Lock) SetAgentPGID(pgid int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("task %s: lock already released", l.id)
	}
	l.info.AgentPGID = pgid
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
	l.info.Processes = refs
	return l.writeInfo()
}

// writeInfo rewrites the lock file in place through the locked descriptor.
// The caller holds l.mu (or owns l exclusively).
func (l *Lock) writeInfo() error {
	data, err := json.Marshal(l.info)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	if _, err := l.f.WriteAt(data, 0); err != nil {
		return err
	}
	return l.f.Sync()
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
// lock on its own descriptor and drops it at once.
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
	return readLockInfo(path, !ok), !ok, nil
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
