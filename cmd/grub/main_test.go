package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/cli"
	"github.com/grub-dev/grub/internal/fakeagent"
	"github.com/grub-dev/grub/internal/sandbox"
	"github.com/grub-dev/grub/schemas"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected files of cmp commands in testdata/*.txtar")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"grub":          func() { os.Exit(cli.Main()) },
		"grub-testlock": testLockMain,
		"fakeagent":     func() { os.Exit(fakeagent.Main()) },
		"grub-fetch":    fetchMain,
	})
}

// TestScripts runs the end-to-end scenarios in testdata/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		// [landlock]: the kernel offers Landlock (the sandbox's tests);
		// [userns]: the sandbox launcher can enter a user and mount
		// namespace to make protected files read-only; [scope]: Landlock
		// ABI 6, whose signal scope keeps sandboxed commands from
		// signalling grub; [netrule]: Landlock ABI 4, whose network rules
		// --no-network and --allow-domain need; [seccomp]: the launcher
		// can install the network filter; [netwarn]: start warns about
		// what --no-network cannot enforce on this kernel.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock":
				_, ok := sandbox.Supported()
				return ok, nil
			case "scope":
				abi, _ := sandbox.Supported()
				return abi >= sandbox.MinABIScope, nil
			case "netrule":
				abi, _ := sandbox.Supported()
				return abi >= sandbox.MinABINetwork, nil
			case "seccomp":
				ok, _ := sandbox.FilterSupported()
				return ok, nil
			case "netwarn":
				abi, _ := sandbox.Supported()
				p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: "/w", NoNetwork: true}
				_, warning, err := sandbox.ResolveABI(p, false, abi)
				return err == nil && strings.Contains(warning, "--no-network"), nil
			case "userns":
				ok, _ := sandbox.Namespaces()
				return ok, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("TZ", "UTC")
			// Under -race every grub run would sleep a second at exit
			// waiting for late reports; the scripts run grub hundreds of
			// times.
			env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			// grub's private folder (the control channel) beside the
			// workspace, where sandboxed commands cannot write: outside
			// $WORK, $TMPDIR and the caches.
			state := filepath.Join(filepath.Dir(env.WorkDir), "state-"+filepath.Base(env.WorkDir))
			if err := os.MkdirAll(state, 0o700); err != nil {
				return err
			}
			env.Setenv("XDG_STATE_HOME", state)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"jsonget":     cmdJSONGet,
			"validjson":   cmdValidJSON,
			"validjsonl":  cmdValidJSONLines,
			"waitlock":    cmdWaitLock,
			"waitfile":    cmdWaitFile,
			"taskid":      cmdTaskID,
			"controlpath": cmdControlPath,
			"fakeopenai":  cmdFakeOpenAI,
			"bgstart":     cmdBgStart,
			"bgsignal":    cmdBgSignal,
			"bgwait":      cmdBgWait,
			"pidgone":     cmdPidGone,
			"httpserver":  cmdHTTPServer,
		},
	})
}

// testLockMain is the grub-testlock program: it takes the lock of task
// os.Args[1] in the current workspace, as a running controller would, says
// "locked", and holds the lock until it is killed (or for a minute, so that
// a broken script leaves nothing behind).
func testLockMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: grub-testlock <task-id>")
		os.Exit(2)
	}
	store, err := harness.Open(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	store.Private = harness.PrivateRoot(os.Getenv)
	if _, err := store.PrivateDir(os.Args[1]); err != nil { // as a runner registers its task
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lock, err := store.LockRunner(os.Args[1]) // as a running controller would
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("locked")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sig:
	case <-time.After(time.Minute):
	}
	if err := lock.Release(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// cmdExits runs a program like exec and checks its exact exit code:
//
//	exits 3 grub status --exit-status 0a1b2c3d
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits <code> <program> [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		got = exitErr.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdJSONGet prints the value at a JSON pointer of a JSON file (or of
// "stdout"): strings as they are, anything else as JSON.
//
//	jsonget .grub/0a1b2c3d/state.json /limits/maxIterations
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonget <file|stdout> <json-pointer>")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	v := doc
	for _, tok := range strings.Split(strings.TrimPrefix(args[1], "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				ts.Fatalf("%s: no %q at %s", args[0], tok, args[1])
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				ts.Fatalf("%s: no index %q at %s", args[0], tok, args[1])
			}
			v = node[i]
		default:
			ts.Fatalf("%s: %s goes into a scalar", args[0], args[1])
		}
	}
	if s, ok := v.(string); ok {
		fmt.Fprintln(ts.Stdout(), s)
		return
	}
	data, err := json.Marshal(v)
	ts.Check(err)
	fmt.Fprintln(ts.Stdout(), string(data))
}

// cmdValidJSON checks a file (or "stdout") against one of grub's schemas.
//
//	validjson status-output.schema.json stdout
func cmdValidJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: validjson <schema> <file|stdout>")
	}
	err := schemas.Validate(args[0], args[1], []byte(ts.ReadFile(args[1])))
	switch {
	case err != nil && !neg:
		ts.Fatalf("%v", err)
	case err == nil && neg:
		ts.Fatalf("%s is valid against %s, want invalid", args[1], args[0])
	}
}

// cmdValidJSONLines checks every line of a file (or "stdout") against
// one of grub's schemas, one document a line, and that there is at least
// one line and nothing after the last newline.
//
//	validjsonl events.schema.json stdout
func cmdValidJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: validjsonl <schema> <file|stdout>")
	}
	text := ts.ReadFile(args[1])
	if text == "" || !strings.HasSuffix(text, "\n") {
		ts.Fatalf("%s: %d bytes, want lines each ended by a newline", args[1], len(text))
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if err := schemas.Validate(args[0], fmt.Sprintf("%s line %d", args[1], i+1), []byte(line)); err != nil {
			ts.Fatalf("%v\n%s", err, line)
		}
	}
}

// cmdWaitLock waits until a live process holds the lock of a task in the
// script's workspace and its pid is in the lock file.
//
//	waitlock 0a1b2c3d
func cmdWaitLock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitlock <task-id>")
	}
	store, err := harness.Open(ts.MkAbs("."))
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, held, err := store.Holder(args[0])
		ts.Check(err)
		if held && info.PID > 0 {
			return
		}
		if time.Now().After(deadline) {
			lock, _ := os.ReadFile(filepath.Join(store.Dir(args[0]), harness.FileLock))
			ts.Fatalf("task %s: no live lock holder after 30s (lock file: %q)", args[0], bytes.TrimSpace(lock))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cmdWaitFile waits until a file exists in the script's work dir.
//
//	waitfile hang.pid
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile <path>")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within 60s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdTaskID sets $TASK to the id of the most recently updated task in the
// script's workspace, so that scripts can name files of a task grub created.
// It waits for a task to appear, for a grub start running in the background.
//
//	taskid
//
// cmdControlPath sets $CONTROL to where the control requests of task id
// (in the current workspace) wait: control.json in grub's private folder,
// outside the workspace.
//
//	controlpath 0a1b2c3d
func cmdControlPath(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: controlpath <task-id>")
	}
	store, err := harness.Open(ts.MkAbs("."))
	ts.Check(err)
	store.Private = harness.PrivateRoot(ts.Getenv)
	path, err := store.ControlPath(args[0])
	ts.Check(err)
	ts.Setenv("CONTROL", path)
}

func cmdTaskID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: taskid")
	}
	store, err := harness.Open(ts.MkAbs("."))
	ts.Check(err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		id, err := store.Resolve("")
		if err == nil {
			ts.Setenv("TASK", id)
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no task appeared within 60s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
