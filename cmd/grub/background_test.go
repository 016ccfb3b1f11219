package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// Background runs of a program whose exact exit code a script checks
// (testscript's own `exec … &` only tells success from failure):
//
//	bgstart runner grub start 'goal' --agent-cmd 'fakeagent'
//	bgsignal runner TERM
//	bgwait runner 130          # then runner.stdout and runner.stderr hold its output
var (
	bgMu   sync.Mutex
	bgRuns = map[*testscript.TestScript]map[string]*bgRun{}
)

type bgRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
}

func cmdBgStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bgstart <name> <program> [args...]")
	}
	path, err := lookPathIn(ts.Getenv("PATH"), args[1])
	ts.Check(err)
	r := &bgRun{cmd: exec.Command(path, args[2:]...), done: make(chan error, 1)}
	r.cmd.Dir = ts.MkAbs(".")
	r.cmd.Env = scriptEnv(ts)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	ts.Check(r.cmd.Start())
	go func() { r.done <- r.cmd.Wait() }()
	bgMu.Lock()
	if bgRuns[ts] == nil {
		bgRuns[ts] = map[string]*bgRun{}
	}
	bgRuns[ts][args[0]] = r
	bgMu.Unlock()
	ts.Defer(func() {
		_ = r.cmd.Process.Kill()
		bgMu.Lock()
		delete(bgRuns, ts)
		bgMu.Unlock()
	})
}

func bgGet(ts *testscript.TestScript, name string) *bgRun {
	bgMu.Lock()
	defer bgMu.Unlock()
	r := bgRuns[ts][name]
	if r == nil {
		ts.Fatalf("no background run named %s", name)
	}
	return r
}

func cmdBgSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bgsignal <name> INT|TERM|KILL")
	}
	sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}[args[1]]
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[1])
	}
	ts.Check(bgGet(ts, args[0]).cmd.Process.Signal(sig))
}

func cmdBgWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bgwait <name> <exit-code>")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	r := bgGet(ts, args[0])
	var werr error
	select {
	case werr = <-r.done:
	case <-time.After(2 * time.Minute):
		ts.Fatalf("%s did not exit within 2 minutes", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+".stdout"), r.stdout.Bytes(), 0o644))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]+".stderr"), r.stderr.Bytes(), 0o644))
	got := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(werr, &exitErr):
		got = exitErr.ExitCode()
	case werr != nil:
		ts.Fatalf("%s: %v", args[0], werr)
	}
	if got != want {
		ts.Logf("stderr of %s:\n%s", args[0], r.stderr.String())
		ts.Fatalf("%s exited with %d, want %d", args[0], got, want)
	}
}

// cmdPidGone checks that the process whose pid a file holds has ended
// (zombies count as ended), polling for a while.
//
//	pidgone hang.pid
func cmdPidGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pidgone <pid-file>")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	ts.Check(err)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
	}
	ts.Fatalf("process %d from %s is still running", pid, args[0])
}

func lookPathIn(pathList, name string) (string, error) {
	for _, dir := range strings.Split(pathList, string(os.PathListSeparator)) {
		p := dir + string(os.PathSeparator) + name
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(name + ": not found in the script's PATH")
}

// scriptEnv is the script's environment, as exec would pass it.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"WORK", "HOME", "XDG_STATE_HOME", "PATH", "TMPDIR", "GORACE", "TZ", "OPENAI_BASE_URL", "GIT_CONFIG_GLOBAL"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
