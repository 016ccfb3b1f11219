package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	// DefaultMaxOutput is the cap on captured stdout (and, separately,
	// stderr) bytes when Spec.MaxOutput is zero.
	DefaultMaxOutput = 8 << 20
	// DefaultTailBytes is the size of the combined output tail when
	// Spec.TailBytes is zero.
	DefaultTailBytes = 4096
	// KillGrace is how long KillGroup waits after SIGTERM before it sends
	// SIGKILL.
	KillGrace = 2 * time.Second
	// PipeGrace is how long Run waits, once the command has exited, for
	// processes it left behind to close its output pipes before closing them.
	PipeGrace = 2 * time.Second
)

// Spec describes one command to run.
type Spec struct {
	// Command is run as `sh -c Command` when Args is empty.
	Command string
	// Args, when non-empty, is executed directly: Args[0] (looked up in
	// PATH) with Args[1:] as its arguments. Command is then ignored.
	Args []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env is added on top of the base environment (BaseEnv, or
	// os.Environ() when BaseEnv is nil); a later entry wins over an
	// earlier one with the same name.
	Env []string
	// BaseEnv, when non-nil, replaces os.Environ() as the environment the
	// command starts from: a caller that must keep grub's secrets from a
	// command passes a scrubbed copy.
	BaseEnv []string
	// Wrap, when set, turns the argv that would run (Args, or sh -c
	// Command) into what runs instead: a sandbox launcher that
	// restricts itself and then executes the original.
	Wrap Wrapper
	// Stdin feeds the command's standard input; nil means /dev/null. It
	// should not block forever: Run cannot interrupt a Read in progress.
	Stdin io.Reader
	// Timeout ends the command's whole process group when it expires; zero
	// means no timeout.
	Timeout time.Duration
	// MaxOutput caps the stdout bytes kept in Result.Stdout (the head and
	// the tail are kept, the middle dropped) and, separately, the stderr
	// bytes kept in Result.Stderr. Zero means DefaultMaxOutput.
	MaxOutput int
	// TailBytes is the size of Result.Tail. Zero means DefaultTailBytes.
	TailBytes int
	// Started, if set, is called with the process group id as soon as the
	// command has started, before Run waits for it.
	Started func(pgid int)
	// Stdout, if set, also receives everything the command writes to its
	// standard output, as it arrives. A write error stops the copy to
	// Stdout; capture goes on.
	Stdout io.Writer
	// Stderr is the same for standard error. Stdout and Stderr are
	// written from different goroutines.
	Stderr io.Writer
	// TailOnly says the caller reads only Result.Tail: standard output
	// and standard error then share one pipe (their bytes in the order the
	// command wrote them) read by one goroutine, and Result.Stdout,
	// Result.Stderr and their counts stay empty. It is how a check runs
	// (init.sh, verify): one pipe and one copy instead of two, nothing kept
	// but the tail. Stdout and Stderr must be nil with it.
	TailOnly bool
}

// A Wrapper puts a launcher in front of a command line (see Spec.Wrap).
type Wrapper func(argv []string) Launch

// Launch is what a Wrapper runs in place of a command line.
type Launch struct {
	// Argv is the command line to run.
	Argv []string
	// Attr, when set, are the attributes the process starts with (the
	// new user and mount namespaces a sandbox launcher starts in, so that
	// it need not start itself again in them); Run adds its own process
	// group to a copy.
	Attr *syscall.SysProcAttr
	// Plain, when set with Attr, is the command line Run starts instead,
	// without Attr, when the system refuses to start the process with
	// them (the launcher then does without, or says why in one line).
	Plain []string
}

// Result is what Run observed.
type Result struct {
	// ExitCode is the command's exit status: -1 when it timed out or was
	// cancelled, 128+n when it was ended by signal n that Run did not send.
	ExitCode int
	// Signal names the signal that ended the command when Run did not send
	// it (for example "segmentation fault"); empty otherwise.
	Signal string
	// TimedOut reports that Spec.Timeout expired and the group was killed.
	TimedOut bool
	// Cancelled reports that ctx was done and the group was killed.
	Cancelled bool
	// Stdout holds standard output, or, when it was longer than MaxOutput,
	// its first MaxOutput/2 bytes followed by its last MaxOutput/2 (rounded
	// so that MaxOutput bytes are kept): a program's last words count.
	Stdout []byte
	// StdoutTruncated reports that standard output was longer than Stdout;
	// the dropped bytes were at offset StdoutCutAt of Stdout.
	StdoutTruncated bool
	StdoutCutAt     int
	// StdoutBytes is the total number of bytes written to standard output.
	StdoutBytes int64
	// Stderr, StderrTruncated and StderrCutAt are the same for standard
	// error.
	Stderr          []byte
	StderrTruncated bool
	StderrCutAt     int
	// Tail is the last TailBytes of stdout and stderr combined in arrival
	// order, as valid UTF-8.
	Tail string
	// Pgid is the command's process group id (zero if it did not start).
	// After a normal exit, processes the command left in the background
	// are still in this group; KillGroup(Pgid) ends them.
	Pgid int
	// Duration is the time from start to the end of Run.
	Duration time.Duration
}

// Run runs the command in s in its own process group and waits for it.
//
// A non-zero exit, a timeout and a cancellation through ctx are reported in
// the Result, not as an error; on a timeout or a cancellation the whole
// process group has been sent SIGTERM, then SIGKILL after KillGrace, before
// Run returns. If ctx is already done, Run starts nothing and reports
// Cancelled. The error is non-nil only when the command could not be
// started or its input could not be read.
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{ExitCode: -1, Cancelled: true}, nil
	}
	maxOut := s.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	tailN := s.TailBytes
	if tailN <= 0 {
		tailN = DefaultTailBytes
	}

	tail := newTailBuffer(tailN)
	stdout := &capture{max: maxOut, tail: tail, tee: s.Stdout}
	stderr := &capture{max: maxOut, tail: tail, tee: s.Stderr}
	var outW, errW io.Writer = stdout, stderr
	var shared *sharedPipe
	if s.TailOnly {
		p, err := newSharedPipe(tail)
		if err != nil {
			return Result{}, fmt.Errorf("proc: start %s: %w", describe(s), err)
		}
		shared, outW, errW = p, p.w, p.w
	}
	start := time.Now()
	cmd, err := startCommand(s, outW, errW)
	if shared != nil {
		shared.started(err == nil)
	}
	if err != nil {
		forgetShell()
		if s.Dir != "" {
			return Result{}, fmt.Errorf("proc: start %s in %s: %w", describe(s), s.Dir, err)
		}
		return Result{}, fmt.Errorf("proc: start %s: %w", describe(s), err)
	}
	pgid := cmd.Process.Pid
	if s.Started != nil {
		s.Started(pgid)
	}

	var timer <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timer = t.C
	}
	exited := make(chan struct{})
	stopped := make(chan struct{})
	var timedOut, cancelled bool
	go func() {
		defer close(stopped)
		select {
		case <-exited:
			return
		case <-timer:
			timedOut = true
		case <-ctx.Done():
			cancelled = true
		}
		// An error here cannot be acted on: the group was ours, so
		// signalling it does not fail in practice.
		_ = stopCommand(cmd)
	}()

	waitErr := cmd.Wait()
	close(exited)
	<-stopped
	if shared != nil {
		shared.drain()
	}

	res := Result{
		StdoutBytes: stdout.total,
		Tail:        TailString(tail.bytes(), tailN),
		Pgid:        pgid,
		Duration:    time.Since(start),
	}
	res.Stdout, res.StdoutTruncated, res.StdoutCutAt = stdout.result()
	res.Stderr, res.StderrTruncated, res.StderrCutAt = stderr.result()
	switch {
	case timedOut:
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	case cancelled:
		res.Cancelled, res.ExitCode = true, -1
		return res, nil
	}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, fmt.Errorf("proc: run %s: %w", describe(s), waitErr)
	}
	return res, nil
}

// check refuses a Spec that cannot run.
func (s Spec) check() error {
	if s.Command == "" && len(s.Args) == 0 {
		return errors.New("proc: nothing to run: set Spec.Command or Spec.Args")
	}
	if s.TailOnly && (s.Stdout != nil || s.Stderr != nil) {
		return errors.New("proc: Spec.TailOnly keeps no stream to tee: leave Stdout and Stderr nil")
	}
	return nil
}

// startCommand starts s's command (Args, or sh -c Command, through Wrap
// when set) in a process group of its own, its output to stdout and
// stderr. When the launch's attributes are refused, it starts the
// launch's plain command line instead.
func startCommand(s Spec, stdout, stderr io.Writer) (*exec.Cmd, error) {
	argv := s.Args
	if len(argv) == 0 {
		argv = []string{"sh", "-c", s.Command}
	}
	l := Launch{Argv: argv}
	if s.Wrap != nil {
		l = s.Wrap(argv)
	}
	cmd := command(s, l.Argv, l.Attr, stdout, stderr)
	err := cmd.Start()
	if err != nil && l.Attr != nil && len(l.Plain) > 0 {
		cmd = command(s, l.Plain, nil, stdout, stderr)
		err = cmd.Start()
	}
	return cmd, err
}

// command builds the exec.Cmd that runs argv for s: its folder,
// environment, input and output, and attributes (attr's, with a process
// group of its own).
func command(s Spec, argv []string, attr *syscall.SysProcAttr, stdout, stderr io.Writer) *exec.Cmd {
	name := argv[0]
	if name == "sh" {
		// The shell is looked up once per PATH, not at every command; it
		// still sees "sh" as its name.
		if path := shellPath(); path != "" {
			name = path
		}
	}
	cmd := exec.Command(name, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, stdout, stderr
	if s.Stdin == nil {
		if null, err := devNull(); err == nil {
			cmd.Stdin = null // one descriptor for every command, not an open each
		}
	}
	cmd.SysProcAttr = groupAttr(attr)
	cmd.WaitDelay = PipeGrace
	cmd.Dir = s.Dir
	switch {
	case s.BaseEnv != nil:
		cmd.Env = append(append([]string(nil), s.BaseEnv...), s.Env...)
	case len(s.Env) > 0:
		cmd.Env = append(os.Environ(), s.Env...)
	}
	return cmd
}

// describe names the command in s for an error message.
func describe(s Spec) string {
	const limit = 80
	name := "sh -c " + s.Command
	if len(s.Args) > 0 {
		name = strings.Join(s.Args, " ")
	}
	if len(name) > limit {
		name = name[:limit] + "…"
	}
	return fmt.Sprintf("%q", name)
}

// TailString returns the last n bytes of b as valid UTF-8: a rune cut at
// the start is dropped and any other invalid byte sequence becomes U+FFFD.
func TailString(b []byte, n int) string {
	if n >= 0 && len(b) > n {
		b = b[len(b)-n:]
		// Drop the continuation bytes of a rune whose start was cut off.
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// capture keeps the head and the tail of one output stream, max bytes in
// all (the first half of the cap for the head, the rest for the tail), feeds
// the shared tail and copies to an optional tee. Keeping the end matters: a
// program's last words (an agent's decision, a summary) come last. Each
// capture is written by one goroutine of os/exec and read only after
// Cmd.Wait returned.
type capture struct {
	max       int
	buf       []byte // everything while it fits; then the head
	end       *ring  // the tail, once the output is longer than max
	total     int64
	tail      *tailBuffer
	tee       io.Writer
	teeFailed bool
}

// Write implements io.Writer; it never fails, so that the command's
// output is always drained.
func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	switch {
	case c.end != nil:
		c.end.write(p)
	case len(c.buf)+len(p) <= c.max:
		c.buf = append(c.buf, p...)
	default:
		keepHead := c.max - c.max/2
		c.end = newRing(c.max / 2)
		rest := p
		if len(c.buf) > keepHead {
			c.end.write(c.buf[keepHead:])
			c.buf = c.buf[:keepHead]
		} else {
			n := keepHead - len(c.buf)
			c.buf = append(c.buf, p[:n]...)
			rest = p[n:]
		}
		c.end.write(rest)
	}
	c.tail.write(p)
	if c.tee != nil && !c.teeFailed {
		if _, err := c.tee.Write(p); err != nil {
			c.teeFailed = true
		}
	}
	return len(p), nil
}

// result returns what was kept, whether bytes were dropped and, if so, the
// offset in the kept bytes where they were dropped.
func (c *capture) result() (kept []byte, truncated bool, cutAt int) {
	if c.end == nil {
		return c.buf, false, 0
	}
	return append(c.buf, c.end.bytes()...), true, len(c.buf)
}

// ring keeps the last len(buf) bytes written to it in constant memory.
type ring struct {
	buf  []byte
	next int  // where the next byte goes
	full bool // buf has wrapped at least once
}

func newRing(n int) *ring { return &ring{buf: make([]byte, n)} }

func (r *ring) write(p []byte) {
	n := len(r.buf)
	if n == 0 {
		return
	}
	if len(p) >= n {
		copy(r.buf, p[len(p)-n:])
		r.next, r.full = 0, true
		return
	}
	k := copy(r.buf[r.next:], p)
	if k < len(p) {
		copy(r.buf, p[k:])
		r.full = true
	}
	r.next = (r.next + len(p)) % n
	if r.next == 0 && len(p) > 0 {
		r.full = true
	}
}

// bytes returns the kept bytes in the order they were written.
func (r *ring) bytes() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.next]...)
	}
	return append(append([]byte(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// tailBuffer keeps the last max bytes written to it, from any goroutine.
type tailBuffer struct {
	mu   sync.Mutex
	ring *ring
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{ring: newRing(n)} }

func (t *tailBuffer) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ring.write(p)
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ring.bytes()
}

// sharedPipe is Spec.TailOnly's output: one pipe for both streams,
// passed to the command as a file (so os/exec starts no copying goroutine
// and allocates no buffer of its own), read into the tail by one
// goroutine with a small buffer.
type sharedPipe struct {
	r, w *os.File
	tail *tailBuffer
	done chan struct{}
}

var pipeBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

func newSharedPipe(tail *tailBuffer) (*sharedPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &sharedPipe{r: r, w: w, tail: tail, done: make(chan struct{})}, nil
}

// started closes grub's copy of the write end (the command holds its
// own) and, when the command started, begins reading.
func (p *sharedPipe) started(ok bool) {
	p.w.Close()
	if !ok {
		p.r.Close()
		close(p.done)
		return
	}
	go func() {
		defer close(p.done)
		buf := pipeBufs.Get().(*[]byte)
		defer pipeBufs.Put(buf)
		for {
			n, err := p.r.Read(*buf)
			p.tail.write((*buf)[:n])
			if err != nil {
				return
			}
		}
	}()
}

// drain waits, once the command has exited, for what it wrote to be read:
// as os/exec's WaitDelay does, at most PipeGrace for processes it left
// behind to close the pipe, then the pipe is closed under them.
func (p *sharedPipe) drain() {
	select {
	case <-p.done:
	default:
		t := time.NewTimer(PipeGrace)
		select {
		case <-p.done:
		case <-t.C:
		}
		t.Stop()
	}
	p.r.Close()
	<-p.done
}

// devNull is the null device, opened once, as the standard input of every
// command that has none: os/exec would open it again for each.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// shell caches where sh is for the PATH it was looked up in.
var shell struct {
	sync.Mutex
	pathEnv, path string
}

// shellPath is exec.LookPath("sh") for grub's PATH as it is now, looked
// up again when PATH changed or a start failed (forgetShell); "" when
// there is none (exec.Command then reports it).
func shellPath() string {
	env := os.Getenv("PATH")
	shell.Lock()
	defer shell.Unlock()
	if shell.path != "" && shell.pathEnv == env {
		return shell.path
	}
	path, err := exec.LookPath("sh")
	if err != nil {
		return ""
	}
	shell.pathEnv, shell.path = env, path
	return path
}

// forgetShell drops the cached shell, after a command failed to start:
// the next one looks sh up again (it may have moved).
func forgetShell() {
	shell.Lock()
	shell.path = ""
	shell.Unlock()
}
