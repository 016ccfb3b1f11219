package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grub-dev/grub/events"
)

// brokenPipe is a stdout whose reader went away after n writes.
type brokenPipe struct {
	n     int
	lines []string
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	if len(b.lines) >= b.n {
		return 0, fmt.Errorf("write /dev/stdout: %w", syscall.EPIPE)
	}
	b.lines = append(b.lines, string(p))
	return len(p), nil
}

// A reader that goes away ends the stream, not the run: later events are
// dropped, and the command ends with the broken pipe (exit 141), the
// run's own error said on stderr first.
func TestEventStreamSurvivesABrokenPipe(t *testing.T) {
	out, errOut := &brokenPipe{n: 1}, &bytes.Buffer{}
	at := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	s := newEventStream(&IOStreams{Out: out, ErrOut: errOut}, true, func() time.Time { return at })
	for i := 1; i <= 3; i++ {
		e := events.New(events.AgentDone, "0a1b2c3d", at, i)
		e.Agent = &events.Agent{DurationSeconds: 1}
		s.Event(e)
	}
	err := s.stop(&ExitError{Code: ExitBlocked, Err: errors.New("task 0a1b2c3d blocked")})
	if len(out.lines) != 1 || !strings.Contains(out.lines[0], `"iteration":1`) {
		t.Errorf("wrote %q, want the first event only", out.lines)
	}
	if !errors.Is(err, syscall.EPIPE) || ExitCode(err) == ExitBlocked {
		t.Errorf("stop returned %v, want the broken pipe", err)
	}
	if got := errOut.String(); got != "grub: task 0a1b2c3d blocked\n" {
		t.Errorf("stderr %q, want the run's error", got)
	}
}

// An event that breaks the schema is grub's bug: said once on stderr, the
// line left out, the stream goes on; run.stopped still comes last.
func TestEventStreamLeavesOutAnInvalidEvent(t *testing.T) {
	var out, errOut bytes.Buffer
	at := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	s := newEventStream(&IOStreams{Out: &out, ErrOut: &errOut}, true, func() time.Time { return at })
	s.Event(events.New(events.TurnStarted, "0a1b2c3d", at, 1)) // no turn data
	s.Event(events.New(events.TurnStarted, "0a1b2c3d", at, 1))
	if err := s.stop(nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"version":1,"type":"run.stopped","taskId":"0a1b2c3d",`) ||
		!strings.HasSuffix(lines[0], `"stopped":{"exitCode":0}}`) {
		t.Errorf("stdout:\n%s\nwant run.stopped alone", out.String())
	}
	if n := strings.Count(errOut.String(), "internal error: output breaks schemas/events.schema.json"); n != 1 {
		t.Errorf("stderr said the bug %d times, want once:\n%s", n, errOut.String())
	}
}

// Without --json there is no stream, and stop hands the error back.
func TestNoEventStreamWithoutJSON(t *testing.T) {
	s := newEventStream(&IOStreams{}, false, time.Now)
	want := errors.New("x")
	if s != nil || s.stop(want) != want {
		t.Errorf("stream %v", s)
	}
	s.forTask(nil, "0a1b2c3d")
}
