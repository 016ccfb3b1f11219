package cli

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/grub-dev/grub/events"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/controller"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
)

// detachEnv names, in a detached runner's environment, the file
// descriptor on which it tells the grub that started it that it runs
// (detachedReady). Main reads it and takes it out of the environment, so
// that nothing the runner starts sees it.
const detachEnv = "GRUB_DETACH_FD"

// detachWait bounds how long grub start --detach waits for the runner to
// report that a turn starts: the task made, the lock held and the agent's
// check passed (agent.CheckTimeout is 10s).
var detachWait = 60 * time.Second

// detachedFromEnv returns the file a detached runner reports on, from
// $GRUB_DETACH_FD, and unsets it; nil in any other grub.
func detachedFromEnv() *os.File {
	v := os.Getenv(detachEnv)
	if v == "" {
		return nil
	}
	os.Unsetenv(detachEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil
	}
	closeOnExec(fd)
	return os.NewFile(uintptr(fd), "detach")
}

// detachArgs are args without --detach (and --detach=…) before a "--",
// as the runner gets them.
func detachArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--detach" || strings.HasPrefix(a, "--detach=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// runDetached is start, resume or answer --detach, once the command's own
// checks passed: it starts grub again with the same arguments (without
// --detach) in a session of its own, stdin from /dev/null (or holding the
// goal read from stdin), and waits until the runner reports that a turn
// starts, relaying what the runner prints until then. It then prints the
// task's id on stdout and where the runner's output goes on stderr, and
// returns nil; a runner that ends before is the command's outcome: its
// exit code, its error already relayed.
func runDetached(f *Factory, stdin string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--detach: cannot find grub's own program: %w", err)
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ready.Close()
	out, outW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return err
	}
	defer out.Close()
	c := exec.Command(exe, detachArgs(f.Args)...)
	if len(os.Args) > 0 {
		c.Args[0] = os.Args[0]
	}
	c.Env = append(os.Environ(), detachEnv+"=3")
	c.ExtraFiles = []*os.File{readyW}
	c.Stdout, c.Stderr = outW, outW
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	c.SysProcAttr = sessionAttr()
	err = c.Start()
	readyW.Close()
	outW.Close()
	if err != nil {
		return fmt.Errorf("--detach: start the runner: %w", err)
	}
	relayed := make(chan struct{})
	go func() { _, _ = io.Copy(f.IO.ErrOut, out); close(relayed) }()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(ready).ReadString('\n')
		line <- s
	}()
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	timer := time.NewTimer(detachWait)
	defer timer.Stop()
	select {
	case s := <-line:
		if id, log, ok := strings.Cut(strings.TrimSpace(s), "\t"); ok && harness.ValidID(id) {
			waitRelay(relayed)
			fmt.Fprintln(f.IO.Out, id)
			fmt.Fprintf(f.IO.ErrOut, "grub: task %s runs in the background (pid %d); its output goes to %s; grub status %s shows it, grub stop %s stops it\n",
				id, c.Process.Pid, termsafe.Line(log), id, id)
			return nil
		}
		// The runner closed its end without a word: it is ending.
		return detachedExit(<-exited, relayed)
	case err := <-exited:
		return detachedExit(err, relayed)
	case <-timer.C:
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf(
			"--detach: the runner (pid %d) did not start a turn within %s; it goes on in the background: see grub status and grub list",
			c.Process.Pid, detachWait)}
	}
}

// waitRelay waits a moment for the runner's output up to its detaching
// to be relayed (a process it started may hold the pipe longer).
func waitRelay(relayed <-chan struct{}) {
	select {
	case <-relayed:
	case <-time.After(time.Second):
	}
}

// detachedExit is the outcome of a runner that ended before it detached:
// its exit code, its message relayed already.
func detachedExit(err error, relayed <-chan struct{}) error {
	waitRelay(relayed)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return &ExitError{Code: ee.ExitCode()}
	}
	return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--detach: the runner ended: %w", err)}
}

// detachedProgress is the display of a detached runner: when the first
// turn starts (the lock held, the agent's check passed), its output moves
// to the task's runner log and it tells the grub that started it, which
// then exits.
type detachedProgress struct {
	controller.Progress
	done  bool
	ready func()
}

func (d *detachedProgress) Event(e events.Event) {
	if e.Type == events.TurnStarted && !d.done {
		d.done = true
		d.ready()
	}
	d.Progress.Event(e)
}

// detachedReady moves this process's stdout and stderr to task id's
// runner log and writes "<id>\t<log>" to notify, which it closes. A log
// that cannot be opened leaves the output where it is (the grub that
// started the runner relays it until it exits), with a warning.
func detachedReady(notify *os.File, store *harness.Store, id string) {
	defer notify.Close()
	log, err := store.OpenRunnerLog(id)
	if err == nil {
		defer log.Close()
		if err = redirectFd(log, 1); err == nil {
			err = redirectFd(log, 2)
		}
	}
	path := store.Rel(store.RunnerLogPath(id))
	if err != nil {
		fmt.Fprintf(os.Stderr, "grub: warning: --detach: %s: %v; the runner's output is lost\n", path, err)
		path = "nowhere"
	}
	fmt.Fprintf(notify, "%s\t%s\n", id, path)
}
