package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLockTwoGoroutinesOneWins(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	const n = 8
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		locks []*Lock
		errs  []error
		start = make(chan struct{})
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := s.Lock(st.ID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				locks = append(locks, l)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(locks) != 1 {
		t.Fatalf("%d goroutines took the lock, want exactly 1 (errors: %v)", len(locks), errs)
	}
	for _, err := range errs {
		var le *LockedError
		if !errors.As(err, &le) || le.Info.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("loser error = %v, want a *LockedError naming pid %d", err, os.Getpid())
		}
	}
	if err := locks[0].Release(); err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatalf("Lock after Release = %v", err)
	}
	l.Release()
}

func TestLockHolderAndAgentPGID(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if info, held, err := s.Holder(st.ID); err != nil || held || !reflect.DeepEqual(info, LockInfo{}) {
		t.Fatalf("Holder before any lock = %+v, %v, %v; want not held, empty", info, held, err)
	}
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	info, held, err := s.Holder(st.ID)
	if err != nil || !held || info.PID != os.Getpid() || info.Host != host || info.StartedAt.IsZero() || info.AgentPGID != 0 {
		t.Fatalf("Holder while held = %+v, %v, %v", info, held, err)
	}
	// The probe must not disturb the holder: its lock is still exclusive.
	if _, err := s.Lock(st.ID); !errors.As(err, new(*LockedError)) {
		t.Fatalf("second Lock after a probe = %v, want *LockedError", err)
	}
	if err := l.SetAgentPGID(4242); err != nil {
		t.Fatal(err)
	}
	if info, _, _ := s.Holder(st.ID); info.AgentPGID != 4242 {
		t.Fatalf("Holder after SetAgentPGID = %+v, want agentPgid 4242", info)
	}
	if l.Info().AgentPGID != 4242 || l.ID() != st.ID {
		t.Fatalf("Lock.Info() = %+v", l.Info())
	}
	if err := l.SetAgentPGID(17); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path(st.ID, FileLock))
	if strings.Contains(string(data), "4242") || !strings.Contains(string(data), `"agentPgid":17`) {
		t.Fatalf("lock file after rewrite = %s", data)
	}
	// What is on record already is not written again (each write is an
	// fsync, and a turn sets both at its end).
	before, _ := os.Stat(s.Path(st.ID, FileLock))
	time.Sleep(20 * time.Millisecond) // past the file system's time stamp resolution
	if err := l.SetAgentPGID(17); err != nil {
		t.Fatal(err)
	}
	if err := l.SetProcesses(nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(s.Path(st.ID, FileLock)); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the lock file was written again for values on record already (%s, then %s)", before.ModTime(), after.ModTime())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release = %v", err)
	}
	if err := l.SetAgentPGID(1); err == nil {
		t.Fatal("SetAgentPGID after Release succeeded")
	}
	info, held, err = s.Holder(st.ID)
	if err != nil || held || info.PID != os.Getpid() || info.AgentPGID != 17 {
		t.Fatalf("Holder after Release = %+v, %v, %v; want not held, last holder, agent still on record", info, held, err)
	}
	if _, err := os.Stat(s.Path(st.ID, FileLock)); err != nil {
		t.Fatalf("lock file gone after Release: %v", err)
	}
	var nf *NotFoundError
	if _, err := s.Lock("ffffffff"); !errors.As(err, &nf) {
		t.Fatalf("Lock of a missing task = %v, want *NotFoundError", err)
	}
	if _, _, err := s.Holder("ffffffff"); !errors.As(err, &nf) {
		t.Fatalf("Holder of a missing task = %v, want *NotFoundError", err)
	}
}

// The helper process: GRUB_LOCK_HELPER=<root>:<id>:<pgid> makes the test
// binary take the lock, record pgid, print "won" or "lost <error>", and
// hold the lock until stdin closes. With GRUB_LOCK_HELPER_DIE=1 it exits
// without releasing.
func TestLockHelperProcess(t *testing.T) {
	spec := os.Getenv("GRUB_LOCK_HELPER")
	if spec == "" {
		t.Skip("helper process for TestLockTwoProcesses")
	}
	parts := strings.Split(spec, ":")
	s := &Store{Root: strings.Join(parts[:len(parts)-2], ":")}
	l, err := s.LockRunner(parts[len(parts)-2]) // a runner: it records an agent
	if err != nil {
		fmt.Printf("lost %v\n", err)
		os.Exit(0)
	}
	pgid, _ := strconv.Atoi(parts[len(parts)-1])
	if err := l.SetAgentPGID(pgid); err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	fmt.Println("won")
	io.Copy(io.Discard, os.Stdin)
	if os.Getenv("GRUB_LOCK_HELPER_DIE") == "1" {
		os.Exit(0)
	}
	if err := l.Release(); err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  string
}

// startHelpers starts n helper processes at once and reads each one's first
// line.
func startHelpers(t *testing.T, s *Store, id string, n int, die bool) []*helper {
	t.Helper()
	hs := make([]*helper, n)
	for i := range hs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("GRUB_LOCK_HELPER=%s:%s:%d", s.Root, id, 1000+i))
		if die {
			cmd.Env = append(cmd.Env, "GRUB_LOCK_HELPER_DIE=1")
		}
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &helper{cmd: cmd, stdin: stdin}
		hs[i] = h
		t.Cleanup(func() { stdin.Close(); cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
		h.line = strings.TrimSpace(line)
		// Drain the rest so the helper never blocks on a full pipe.
		go io.Copy(io.Discard, stdout)
		if i == 0 && h.line != "won" {
			t.Fatalf("first helper did not take the lock: %q", h.line)
		}
	}
	return hs
}

func TestLockTwoProcesses(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	hs := startHelpers(t, s, st.ID, 3, false)
	winner := hs[0]
	for i, h := range hs[1:] {
		want := fmt.Sprintf("lost task %s is already running (pid %d", st.ID, winner.cmd.Process.Pid)
		if !strings.HasPrefix(h.line, want) {
			t.Errorf("helper %d said %q, want it to start %q", i+1, h.line, want)
		}
	}
	// This process cannot take it either, and Holder sees the winner.
	var le *LockedError
	if _, err := s.Lock(st.ID); !errors.As(err, &le) || le.Info.PID != winner.cmd.Process.Pid {
		t.Fatalf("Lock in the test process = %v, want *LockedError naming pid %d", err, winner.cmd.Process.Pid)
	}
	info, held, err := s.Holder(st.ID)
	if err != nil || !held || info.PID != winner.cmd.Process.Pid || info.AgentPGID != 1000 {
		t.Fatalf("Holder = %+v, %v, %v; want held by pid %d with agentPgid 1000", info, held, err, winner.cmd.Process.Pid)
	}
	winner.stdin.Close()
	if err := winner.cmd.Wait(); err != nil {
		t.Fatalf("winner: %v", err)
	}
	info, held, err = s.Holder(st.ID)
	if err != nil || held || info.AgentPGID != 1000 {
		t.Fatalf("Holder after the winner released = %+v, %v, %v; want not held, its agent still on record", info, held, err)
	}
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatalf("Lock after the winner exited = %v", err)
	}
	if prev := l.Previous(); prev.PID != winner.cmd.Process.Pid || prev.AgentPGID != 1000 {
		t.Fatalf("Previous() after the release = %+v, want pid %d and its agent", prev, winner.cmd.Process.Pid)
	}
	l.Release()
}

func TestLockDeadHolderLeavesAgentPGID(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	hs := startHelpers(t, s, st.ID, 1, true)
	hs[0].stdin.Close()
	if err := hs[0].cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	info, held, err := s.Holder(st.ID)
	if err != nil || held || info.PID != hs[0].cmd.Process.Pid || info.AgentPGID != 1000 {
		t.Fatalf("Holder after the holder died = %+v, %v, %v; want not held, with its pid and agentPgid 1000", info, held, err)
	}
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatalf("Lock after the holder died = %v", err)
	}
	defer l.Release()
	if prev := l.Previous(); prev.PID != hs[0].cmd.Process.Pid || prev.AgentPGID != 1000 {
		t.Fatalf("Previous() = %+v, want the dead holder with agentPgid 1000", prev)
	}
	// The agent stays on record, through any number of short-lived holders,
	// until a controller has ended it and clears it.
	if info, held, _ := s.Holder(st.ID); !held || info.PID != os.Getpid() || info.AgentPGID != 1000 {
		t.Fatalf("Holder after taking over = %+v, %v; want the agent carried over", info, held)
	}
	if err := l.SetAgentPGID(0); err != nil {
		t.Fatal(err)
	}
	if info, _, _ := s.Holder(st.ID); info.AgentPGID != 0 {
		t.Fatalf("Holder after clearing = %+v", info)
	}
}

// A runner killed while a child it started is between fork and exec
// leaves that child holding the lock file for a moment: the record names
// a runner that is gone. The next runner waits for the file instead of
// saying the task is already running (make chaos found it on a loaded
// machine). A live runner's lock is still refused at once.
func TestLockWaitsOutAGoneRunnersChild(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	record := fmt.Sprintf(`{"pid":%d,"host":%q,"startedAt":"2026-01-01T00:00:00Z","role":"runner"}`+"\n", gone.Process.Pid, s.HostName())
	if err := os.WriteFile(s.Path(st.ID, FileLock), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	// The child's copy of the runner's open file, holding the flock.
	child, err := os.OpenFile(s.Path(st.ID, FileLock), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := tryLock(child, true); !ok || err != nil {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	go func() { time.Sleep(300 * time.Millisecond); child.Close() }()
	l, err := s.LockRunner(st.ID)
	if err != nil {
		t.Fatalf("LockRunner while a gone runner's child holds the file = %v, want the lock once it lets go", err)
	}
	// Now a live runner (this process) holds it: refused without waiting
	// (were it waited for, the test would hang until its timeout).
	defer func(w time.Duration) { ShortHolderWait = w }(ShortHolderWait)
	ShortHolderWait = time.Hour
	other := &Store{Root: s.Root, Host: s.Host}
	if _, err := other.LockRunner(st.ID); !errors.As(err, new(*LockedError)) {
		t.Fatalf("LockRunner while a live runner holds the lock = %v, want *LockedError", err)
	}
	l.Release()
}
