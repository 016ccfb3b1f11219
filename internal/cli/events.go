package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/grub-dev/grub/events"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/schemas"
)

// eventStream is what --json makes of the stdout of a command that runs a
// task (start, resume, answer): the run's events (package events), one
// line of JSON each, checked against schemas/events.schema.json and
// written as they come, one write a line (stdout is not buffered, so a
// reader sees each line as it is written). Nothing else goes to stdout;
// the human lines stay on stderr. It is a controller.Progress beside the
// display (controller.Tee), and the command ends it with stop, whatever
// happened: run.stopped is always the last line. A nil *eventStream (no
// --json) does nothing.
//
// A reader that goes away does not end the run: the first failed write
// ends the stream, the run goes on as it would have, and the command
// exits 141 (ExitBrokenPipe), as a failed write of its status does.
type eventStream struct {
	mu     sync.Mutex
	w      io.Writer
	errOut io.Writer
	now    func() time.Time

	broken    error // the first failed write: nothing more is written
	bug       bool  // an event broke its schema (said once on stderr)
	store     *harness.Store
	taskID    string
	iteration int
	final     *harness.State  // the task as the run left it
	task      json.RawMessage // its status output, for run.stopped
}

// newEventStream is the stream of a run's command on ios, or nil without
// --json.
func newEventStream(ios *IOStreams, asJSON bool, now func() time.Time) *eventStream {
	if !asJSON {
		return nil
	}
	return &eventStream{w: ios.Out, errOut: ios.ErrOut, now: now}
}

func (s *eventStream) Say(string)       {}
func (s *eventStream) Heartbeat(string) {}
func (s *eventStream) Tick(time.Time)   {}

// Event writes e as a line.
func (s *eventStream) Event(e events.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.TaskID != "" {
		s.taskID = e.TaskID
	}
	s.iteration = e.Iteration
	s.write(e)
}

func (s *eventStream) write(e events.Event) {
	if s.broken != nil {
		return
	}
	data, err := encodeJSON(schemas.Events, e, false)
	if err != nil {
		// grub's bug: said once, and the line left out; the run goes on.
		if !s.bug {
			s.bug = true
			fmt.Fprintf(s.errOut, "grub: %v\n", err)
		}
		return
	}
	if _, err := s.w.Write(data); err != nil {
		s.broken = err
	}
}

// forTask names the task the command works on, so that run.stopped can
// name it and its status even when the run ended before the controller
// reported anything.
func (s *eventStream) forTask(store *harness.Store, id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store, s.taskID = store, id
}

// stopped keeps the task as the run left it and its status output.
func (s *eventStream) stopped(st *harness.State, task []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.final, s.task, s.iteration = st, task, st.CurrentIteration
}

// stop writes run.stopped for the command's outcome err and returns the
// command's error: err, or a broken pipe when the stream's reader went
// away (the error printed on stderr first, as execute would have).
func (s *eventStream) stop(err error) error {
	if s == nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.final
	if st == nil && s.store != nil && harness.ValidID(s.taskID) {
		st, _ = s.store.LoadState(s.taskID) // nil when it cannot be read
	}
	e := events.New(events.Stopped, s.taskID, s.now(), s.iteration)
	e.Stopped = &events.Stop{ExitCode: ExitCode(err), Task: s.task}
	if st != nil {
		e.Iteration = st.CurrentIteration
		e.Stopped.Status, e.Stopped.Reason = string(st.Status), st.StopReason
	}
	var exitErr *ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.Err == nil) {
		e.Stopped.Error = err.Error()
	}
	s.write(e)
	if s.broken == nil || !errors.Is(s.broken, syscall.EPIPE) {
		return errors.Join(err, s.broken)
	}
	if err != nil && !errors.Is(err, syscall.EPIPE) {
		printError(s.errOut, err)
	}
	return s.broken
}
