//go:build unix

package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/internal/proc/proctest"
)

// A cancelled call kills the command's whole group, grandchild included,
// and returns the context's error.
func TestShellCancelKillsGrandchild(t *testing.T) {
	e := newEnv(t, nil)
	pidFile := filepath.Join(e.ws, "grandchild.pid")
	ctx, cancel := context.WithCancel(t.Context())
	type answer struct {
		res Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := e.runErr(ctx, "shell", map[string]any{"command": "sleep 300 & echo $! > grandchild.tmp && mv grandchild.tmp grandchild.pid; wait"})
		done <- answer{res, err}
	}()
	pid := proctest.WaitPID(t, pidFile)
	if !proctest.Alive(pid) {
		t.Fatalf("grandchild %d is not running before the cancel", pid)
	}
	cancel()
	a := <-done
	if !errors.Is(a.err, context.Canceled) {
		t.Errorf("Run after cancel = %+v, %v; want context.Canceled", a.res, a.err)
	}
	proctest.WaitGone(t, pid)
}

// A timeout kills the grandchild too.
func TestShellTimeoutKillsGrandchild(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ShellTimeout = 2 * time.Second })
	res := e.run("shell", map[string]any{"command": "sleep 300 & echo $! > grandchild.tmp && mv grandchild.tmp grandchild.pid; wait"})
	if !res.IsError || !strings.Contains(res.Text, "timed out") {
		t.Errorf("got %+v, want a timeout", res)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(e.ws, "grandchild.pid")))
}

// What a command leaves running in the background is killed once it exits.
func TestShellKillsBackgroundLeftovers(t *testing.T) {
	e := newEnv(t, nil)
	res := e.run("shell", map[string]any{"command": "sleep 300 >/dev/null 2>&1 & echo $!"})
	if res.IsError || !strings.HasPrefix(res.Text, "exit code 0") {
		t.Fatalf("got %+v", res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(res.Text, "exit code 0\n--- stdout ---\n")))
	if err != nil {
		t.Fatalf("no pid in %q", res.Text)
	}
	proctest.WaitGone(t, pid)
}

// Every shell command's process group is reported as it starts, so the
// controller can record it in the lock and end it after a crash.
func TestShellReportsProcessGroup(t *testing.T) {
	var groups []int
	e := newEnv(t, func(c *Config) { c.Started = func(pgid int) { groups = append(groups, pgid) } })
	res := e.run("shell", map[string]any{"command": "awk '{print $5}' /proc/$$/stat > pgid.txt"})
	if res.IsError {
		t.Fatalf("shell: %+v", res)
	}
	b, err := os.ReadFile(filepath.Join(e.ws, "pgid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if len(groups) != 2 || groups[0] != want || groups[1] != 0 || want == syscall.Getpgrp() {
		t.Fatalf("reported groups %v, want [%d 0]: the command's group, then none once it is over", groups, want)
	}
}
