//go:build unix

package proctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Patience is how long the helpers wait before they give up.
const Patience = 10 * time.Second

const poll = 20 * time.Millisecond

// Alive reports whether process pid is still running. A zombie (exited,
// not yet reaped) counts as ended. Without /proc (not Linux) a zombie
// counts as running.
func Alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil // no /proc: trust kill; with /proc: gone
	}
	// "pid (comm) state …": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	fields := strings.Fields(string(b)[i+1:])
	return len(fields) == 0 || (fields[0] != "Z" && fields[0] != "X")
}

// WaitGone waits until pid has ended; after Patience it kills the process
// and fails the test.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for Alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(poll)
	}
}

// WaitPID waits for a positive pid to appear in the file at path and
// returns it, failing the test after Patience. Call it from the test's
// goroutine.
func WaitPID(t testing.TB, path string) int {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s after %s (read error: %v, content %q)", path, Patience, err, b)
		}
		time.Sleep(poll)
	}
}

// WaitFile waits until path exists. After a minute it reports an error
// (not fatal, so that any goroutine may call it) and returns false.
func WaitFile(t testing.TB, path string) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			t.Errorf("%s never appeared", path)
			return false
		}
		time.Sleep(poll)
	}
}
