//go:build linux

package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/grub-dev/grub/internal/proc/proctest"
)

// generous bounds a run that was killed must stay under; the commands
// involved would otherwise run for 300 s.
const killedWithin = 60 * time.Second

func TestRunCapturesExitAndOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		spec       Spec
		wantCode   int
		wantStdout string
		wantStderr string
		wantSignal string
	}{
		{name: "success", spec: Spec{Command: "echo hi"}, wantStdout: "hi\n"},
		{name: "exit code", spec: Spec{Command: "echo partial; exit 3"}, wantCode: 3, wantStdout: "partial\n"},
		{name: "stderr", spec: Spec{Command: "echo oops >&2; exit 1"}, wantCode: 1, wantStderr: "oops\n"},
		{name: "killed by own signal", spec: Spec{Command: "kill -TERM $$"}, wantCode: 128 + int(syscall.SIGTERM), wantSignal: "terminated"},
		{name: "args exec directly", spec: Spec{Args: []string{"printf", "%s-%s", "a b", "$HOME"}}, wantStdout: "a b-$HOME"},
		{name: "env added", spec: Spec{Command: `printf %s "$PROC_TEST_VAR"`, Env: []string{"PROC_TEST_VAR=xyz"}}, wantStdout: "xyz"},
		{name: "env later wins", spec: Spec{Command: `printf %s "$PROC_TEST_VAR"`, Env: []string{"PROC_TEST_VAR=1", "PROC_TEST_VAR=2"}}, wantStdout: "2"},
		{name: "env keeps os environ", spec: Spec{Command: `test -n "$PATH" && printf ok`, Env: []string{"PROC_TEST_VAR=1"}}, wantStdout: "ok"},
		{name: "stdin", spec: Spec{Command: "cat", Stdin: strings.NewReader("the prompt\nline 2\n")}, wantStdout: "the prompt\nline 2\n"},
		{name: "nil stdin is empty", spec: Spec{Command: "cat; echo end"}, wantStdout: "end\n"},
		{name: "stdin not read", spec: Spec{Command: "echo ignored", Stdin: strings.NewReader(strings.Repeat("x", 1<<20))}, wantStdout: "ignored\n"},
		{name: "dir", spec: Spec{Command: "pwd -P", Dir: dir}, wantStdout: realDir + "\n"},
		{name: "missing program via sh", spec: Spec{Command: "no-such-program-grub-test 2>/dev/null"}, wantCode: 127},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), tc.spec)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tc.wantCode {
				t.Errorf("ExitCode = %d, want %d (stderr %q)", res.ExitCode, tc.wantCode, res.Stderr)
			}
			if string(res.Stdout) != tc.wantStdout {
				t.Errorf("Stdout = %q, want %q", res.Stdout, tc.wantStdout)
			}
			if string(res.Stderr) != tc.wantStderr {
				t.Errorf("Stderr = %q, want %q", res.Stderr, tc.wantStderr)
			}
			if res.Signal != tc.wantSignal {
				t.Errorf("Signal = %q, want %q", res.Signal, tc.wantSignal)
			}
			if res.TimedOut || res.Cancelled || res.StdoutTruncated || res.StderrTruncated {
				t.Errorf("unexpected flags: %+v", res)
			}
			if res.StdoutBytes != int64(len(tc.wantStdout)) {
				t.Errorf("StdoutBytes = %d, want %d", res.StdoutBytes, len(tc.wantStdout))
			}
			if res.Pgid <= 0 {
				t.Errorf("Pgid = %d, want > 0", res.Pgid)
			}
		})
	}
}

func TestRunStartErrors(t *testing.T) {
	t.Parallel()
	missingDir := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{name: "empty spec", spec: Spec{}, want: "set Spec.Command or Spec.Args"},
		{name: "missing program", spec: Spec{Args: []string{"/nonexistent/grub-test-prog"}}, want: "/nonexistent/grub-test-prog"},
		{name: "missing dir", spec: Spec{Command: "true", Dir: missingDir}, want: missingDir},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			started := false
			tc.spec.Started = func(int) { started = true }
			_, err := Run(context.Background(), tc.spec)
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if started {
				t.Error("Started was called for a command that did not start")
			}
		})
	}
}

func TestRunTailKeepsEnd(t *testing.T) {
	t.Parallel()
	// 10000 bytes on each stream, then markers. The two pipes are read
	// concurrently, so which stream's end comes last in the combined tail
	// depends on scheduling; either way the tail is the last 100 bytes read.
	cmd := `head -c 10000 /dev/zero | tr '\0' a; echo OUT-END; head -c 10000 /dev/zero | tr '\0' b >&2; echo ERR-END >&2`
	res, err := Run(context.Background(), Spec{Command: cmd, TailBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tail) != 100 {
		t.Errorf("len(Tail) = %d, want 100", len(res.Tail))
	}
	if !strings.HasSuffix(res.Tail, "OUT-END\n") && !strings.HasSuffix(res.Tail, "ERR-END\n") {
		t.Errorf("Tail = %q, want it to end with the last bytes of a stream", res.Tail)
	}
	// With one stream the order is fixed: the tail is its very end.
	one, err := Run(context.Background(), Spec{Command: `head -c 10000 /dev/zero | tr '\0' b >&2; echo ERR-END >&2`, TailBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("b", 92) + "ERR-END\n"; one.Tail != want {
		t.Errorf("Tail = %q, want %q", one.Tail, want)
	}
	if !bytes.HasSuffix(res.Stdout, []byte("aaaOUT-END\n")) || len(res.Stdout) != 10008 {
		t.Errorf("Stdout has %d bytes ending %q, want all 10008", len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-12):])
	}

	res, err = Run(context.Background(), Spec{Command: "printf 'short'"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tail != "short" {
		t.Errorf("Tail = %q, want %q", res.Tail, "short")
	}
}

func TestTailString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "shorter than n", in: "abc", n: 10, want: "abc"},
		{name: "cut ascii", in: "abcdef", n: 3, want: "def"},
		{name: "cut inside rune drops its rest", in: "x\u00e9\u4e16z", n: 3, want: "z"},     // 世 is 3 bytes; keeping 2 of them drops them
		{name: "cut at rune start keeps rune", in: "x\u00e9\u4e16z", n: 4, want: "\u4e16z"}, // exactly 世z
		{name: "invalid bytes replaced", in: "ok\xffok", n: 10, want: "ok\uFFFDok"},
		{name: "truncated rune at end replaced", in: "ab\xe4\xb8", n: 10, want: "ab\uFFFD"},
		{name: "empty", in: "", n: 5, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TailString([]byte(tc.in), tc.n)
			if got != tc.want {
				t.Errorf("TailString(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("TailString(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
			}
		})
	}
}

func TestRunMaxOutput(t *testing.T) {
	t.Parallel()
	const total = 5_000_000
	big := "head -c " + strconv.Itoa(total) + " /dev/zero | tr '\\0' x"
	tests := []struct {
		name          string
		spec          Spec
		wantStdout    int
		wantTruncated bool
		wantStderr    int
		wantErrTrunc  bool
	}{
		{name: "default cap keeps 5 MB", spec: Spec{Command: big}, wantStdout: total},
		{name: "1 MiB cap", spec: Spec{Command: big, MaxOutput: 1 << 20}, wantStdout: 1 << 20, wantTruncated: true},
		{name: "exact fit", spec: Spec{Command: "printf 12345", MaxOutput: 5}, wantStdout: 5},
		{name: "stderr capped", spec: Spec{Command: big + " >&2", MaxOutput: 1000}, wantStderr: 1000, wantErrTrunc: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tee bytes.Buffer
			tc.spec.Stdout = &tee
			res, err := Run(context.Background(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("ExitCode = %d, stderr %q", res.ExitCode, res.Tail)
			}
			if len(res.Stdout) != tc.wantStdout || res.StdoutTruncated != tc.wantTruncated {
				t.Errorf("stdout: %d bytes, truncated %v; want %d, %v", len(res.Stdout), res.StdoutTruncated, tc.wantStdout, tc.wantTruncated)
			}
			if len(res.Stderr) != tc.wantStderr || res.StderrTruncated != tc.wantErrTrunc {
				t.Errorf("stderr: %d bytes, truncated %v; want %d, %v", len(res.Stderr), res.StderrTruncated, tc.wantStderr, tc.wantErrTrunc)
			}
			if int64(tee.Len()) != res.StdoutBytes {
				t.Errorf("tee got %d bytes, StdoutBytes = %d; the tee must see all output", tee.Len(), res.StdoutBytes)
			}
			if !bytes.HasPrefix(tee.Bytes(), res.Stdout) {
				t.Error("Stdout is not the head of the output")
			}
		})
	}
}

// Spec.Stderr sees all of standard error as it arrives, while Result.Stderr
// keeps only MaxOutput bytes of it; Spec.Stdout sees only standard output.
func TestRunStderrTee(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	res, err := Run(context.Background(), Spec{Command: "echo to-out; head -c 100000 /dev/zero | tr '\\0' e >&2", MaxOutput: 1000, Stdout: &out, Stderr: &errs})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "to-out\n" {
		t.Errorf("stdout tee = %q", out.String())
	}
	if errs.Len() != 100000 || strings.Trim(errs.String(), "e") != "" {
		t.Errorf("stderr tee got %d bytes, want the 100000 written", errs.Len())
	}
	if len(res.Stderr) != 1000 || !res.StderrTruncated {
		t.Errorf("Result.Stderr %d bytes, truncated %v; want 1000, true", len(res.Stderr), res.StderrTruncated)
	}
}

// failingWriter fails every write.
type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("broken tee")
}

func TestRunBrokenTeeKeepsCapturing(t *testing.T) {
	t.Parallel()
	w := &failingWriter{}
	res, err := Run(context.Background(), Spec{Command: "echo one; sleep 0.05; echo two", Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "one\ntwo\n" {
		t.Errorf("Stdout = %q, want both lines", res.Stdout)
	}
	if w.calls != 1 {
		t.Errorf("broken tee written %d times, want 1", w.calls)
	}
}

func TestRunTimeoutKillsGrandchild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		{name: "sigterm", script: "sleep 300 & echo $! > pidfile.tmp && mv pidfile.tmp pidfile; wait"},
		// Both ignore SIGTERM (the ignore is inherited), so only SIGKILL
		// after the grace ends them.
		{name: "sigterm ignored", script: "trap '' TERM; sleep 300 & echo $! > pidfile.tmp && mv pidfile.tmp pidfile; wait; wait"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var pgid int
			res, err := Run(context.Background(), Spec{
				Command: tc.script,
				Dir:     dir,
				Timeout: 3 * time.Second,
				Started: func(p int) { pgid = p },
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.Cancelled || res.ExitCode != -1 {
				t.Errorf("TimedOut %v Cancelled %v ExitCode %d; want true false -1", res.TimedOut, res.Cancelled, res.ExitCode)
			}
			if res.Duration > killedWithin {
				t.Errorf("Duration %v: the group was not killed", res.Duration)
			}
			if pgid == 0 || pgid != res.Pgid {
				t.Errorf("Started got pgid %d, Result.Pgid %d", pgid, res.Pgid)
			}
			proctest.WaitGone(t, proctest.WaitPID(t, filepath.Join(dir, "pidfile")))
			if GroupAlive(pgid) {
				t.Errorf("group %d still alive after a timeout", pgid)
			}
		})
	}
}

func TestRunCancelKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pidfile")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		proctest.WaitFile(t, pidfile)
		cancel()
	}()
	res, err := Run(ctx, Spec{Command: "sleep 300 & echo $! > pidfile.tmp; mv pidfile.tmp pidfile; wait", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.ExitCode != -1 {
		t.Errorf("Cancelled %v TimedOut %v ExitCode %d; want true false -1", res.Cancelled, res.TimedOut, res.ExitCode)
	}
	if res.Duration > killedWithin {
		t.Errorf("Duration %v: the group was not killed", res.Duration)
	}
	proctest.WaitGone(t, proctest.WaitPID(t, pidfile))
	if GroupAlive(res.Pgid) {
		t.Errorf("group %d still alive after cancel", res.Pgid)
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	res, err := Run(ctx, Spec{
		Command: "touch ran",
		Dir:     dir,
		Started: func(int) { t.Error("Started called with a done context") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.ExitCode != -1 {
		t.Errorf("Cancelled %v ExitCode %d; want true -1", res.Cancelled, res.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran with a done context")
	}
}

func TestStartedReceivesOwnGroup(t *testing.T) {
	t.Parallel()
	var pgid, groupOfLeader int
	var getErr error
	res, err := Run(context.Background(), Spec{
		Command: "true",
		Started: func(p int) {
			pgid = p
			// Not yet reaped, so the leader can still be queried.
			groupOfLeader, getErr = syscall.Getpgid(p)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if getErr != nil {
		t.Fatalf("Getpgid(%d): %v", pgid, getErr)
	}
	if groupOfLeader != pgid {
		t.Errorf("process %d is in group %d, want its own group", pgid, groupOfLeader)
	}
	if pgid == syscall.Getpgrp() {
		t.Error("command ran in the test's own process group")
	}
	if res.Pgid != pgid {
		t.Errorf("Result.Pgid = %d, Started got %d", res.Pgid, pgid)
	}
}

// A background process holding the stdout pipe after the command exits
// must not make Run hang, and is left for KillGroup.
func TestRunLeftBackgroundAndKillGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := Run(context.Background(), Spec{Command: "sleep 300 & echo $! > pidfile; echo done", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || string(res.Stdout) != "done\n" {
		t.Errorf("ExitCode %d Stdout %q; want 0 %q", res.ExitCode, res.Stdout, "done\n")
	}
	if res.Duration > killedWithin {
		t.Errorf("Duration %v: Run waited for the background process", res.Duration)
	}
	pid := proctest.WaitPID(t, filepath.Join(dir, "pidfile"))
	if !GroupAlive(res.Pgid) {
		t.Fatalf("group %d not alive though background pid %d should be in it", res.Pgid, pid)
	}
	if err := KillGroup(res.Pgid); err != nil {
		t.Fatalf("KillGroup: %v", err)
	}
	proctest.WaitGone(t, pid)
	if GroupAlive(res.Pgid) {
		t.Errorf("group %d alive after KillGroup", res.Pgid)
	}
	if err := KillGroup(res.Pgid); err != nil {
		t.Errorf("KillGroup on a gone group: %v, want nil", err)
	}
}

func TestKillGroupRefuses(t *testing.T) {
	t.Parallel()
	for _, pgid := range []int{-5, 0, 1, syscall.Getpgrp()} {
		if err := KillGroup(pgid); err == nil {
			t.Errorf("KillGroup(%d) = nil, want a refusal", pgid)
		}
	}
	if GroupAlive(0) || GroupAlive(-1) {
		t.Error("GroupAlive of a non-group id reported true")
	}
	if !GroupAlive(syscall.Getpgrp()) {
		t.Error("GroupAlive of the test's own group reported false")
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		wantState byte
		wantPgrp  int
		wantOK    bool
	}{
		{name: "plain", in: "42 (sleep) S 1 40 40 0 -1", wantState: 'S', wantPgrp: 40, wantOK: true},
		{name: "zombie", in: "42 (sh) Z 1 40 40 0", wantState: 'Z', wantPgrp: 40, wantOK: true},
		{name: "comm with spaces and parens", in: "42 (a) b (c) R 1 77 77 0", wantState: 'R', wantPgrp: 77, wantOK: true},
		{name: "no paren", in: "42 sleep S 1 40", wantOK: false},
		{name: "too short", in: "42 (x) S 1", wantOK: false},
		{name: "bad pgrp", in: "42 (x) S 1 zz", wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state, pgrp, ok := parseStat([]byte(tc.in))
			if ok != tc.wantOK || (ok && (state != tc.wantState || pgrp != tc.wantPgrp)) {
				t.Errorf("parseStat(%q) = %q %d %v; want %q %d %v", tc.in, state, pgrp, ok, tc.wantState, tc.wantPgrp, tc.wantOK)
			}
		})
	}
}

func TestRunBaseEnvAndWrap(t *testing.T) {
	t.Setenv("GRUB_PROC_SECRET", "hunter2")
	res, err := Run(context.Background(), Spec{
		Command: `echo "secret=${GRUB_PROC_SECRET:-unset} extra=$EXTRA"`,
		BaseEnv: []string{"PATH=" + os.Getenv("PATH")},
		Env:     []string{"EXTRA=1"},
		// The wrapper runs the original argv through env with one more
		// variable, the way a launcher would run it after restricting
		// itself.
		Wrap: func(argv []string) Launch { return Launch{Argv: append([]string{"env", "WRAPPED=yes"}, argv...)} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "secret=unset extra=1" {
		t.Errorf("stdout %q: the base environment was not replaced", got)
	}
	res, err = Run(context.Background(), Spec{Command: `echo "$WRAPPED"`,
		Wrap: func(argv []string) Launch { return Launch{Argv: append([]string{"env", "WRAPPED=yes"}, argv...)} }})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "yes" {
		t.Errorf("wrapped run: %q, %v", res.Stdout, err)
	}
}

// TailOnly: both streams share one pipe, so the tail holds their bytes in
// the order the command wrote them; nothing else is kept; the shell still
// calls itself sh; a process left holding the pipe, a timeout and a tee
// asked for are handled as without it.
func TestRunTailOnly(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Spec{Command: `echo out1; echo err1 >&2; echo out2; echo $0 >&2`, TailOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "out1\nerr1\nout2\nsh\n"; res.Tail != want || res.ExitCode != 0 {
		t.Errorf("Tail %q exit %d, want %q 0", res.Tail, res.ExitCode, want)
	}
	if len(res.Stdout) != 0 || len(res.Stderr) != 0 {
		t.Errorf("Stdout %q Stderr %q kept, want nothing but the tail", res.Stdout, res.Stderr)
	}

	dir := t.TempDir()
	left, err := Run(context.Background(), Spec{Command: "sleep 300 & echo $! > pidfile; echo done", Dir: dir, TailOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	pid := proctest.WaitPID(t, filepath.Join(dir, "pidfile"))
	if left.Tail != "done\n" || !GroupAlive(left.Pgid) {
		t.Errorf("Tail %q, group alive %v: want done and the background process still there", left.Tail, GroupAlive(left.Pgid))
	}
	if err := KillGroup(left.Pgid); err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, pid)

	timed, err := Run(context.Background(), Spec{Command: "echo start; sleep 300", Timeout: 200 * time.Millisecond, TailOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !timed.TimedOut || timed.Tail != "start\n" || GroupAlive(timed.Pgid) {
		t.Errorf("TimedOut %v Tail %q group alive %v; want true, start, gone", timed.TimedOut, timed.Tail, GroupAlive(timed.Pgid))
	}

	if _, err := Run(context.Background(), Spec{Command: "true", TailOnly: true, Stdout: io.Discard}); err == nil {
		t.Error("TailOnly with a tee: no error")
	}
}
