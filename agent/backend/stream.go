package backend

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// This file holds what the claude and codex backends share to read their
// programs' JSON-lines output as it arrives: the line splitter, the stall
// watch and the activity reporter.

// maxEventLine bounds one JSON-lines event the claude and codex backends
// decode. Longer lines (a command's huge output inside an event) are
// skipped without being held in memory; the events grub needs are short.
const maxEventLine = 16 << 20

// programCaptureBytes is how much of an event-printing program's standard
// output and standard error proc keeps: events are parsed as they stream,
// so the captured copy only serves error messages.
const programCaptureBytes = 1 << 20

// DefaultStallTimeout is how long the claude and codex backends let their
// program go on reporting errors (a provider it cannot reach, retried
// forever) without any progress before they end the turn.
const DefaultStallTimeout = 5 * time.Minute

// eventStream is what the readers of Claude Code's and Codex's event
// streams share: the lock proc's writes and the stall watch take, the line
// splitter, the turn's transcript and its first write error, the
// workspace (activity paths are shown relative to it), the activity
// reporter and the stall watch. A reader embeds it and sets lines.handle.
type eventStream struct {
	mu        sync.Mutex
	lines     lineSplitter
	tr        *transcript
	trErr     error
	workspace string
	act       activity
	stall     *stallWatch
}

func newEventStream(tr *transcript, workspace string, tell func(string), stall *stallWatch, handle func([]byte, int)) eventStream {
	return eventStream{tr: tr, workspace: workspace, act: activity{tell: tell}, stall: stall,
		lines: lineSplitter{max: maxEventLine, handle: handle}}
}

// Write implements io.Writer; it never fails.
func (s *eventStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines.write(b)
	return len(b), nil
}

// transcriptErr is the first error writing the transcript.
func (s *eventStream) transcriptErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trErr
}

// write appends e to the transcript, keeping the first error.
func (s *eventStream) write(e TranscriptEntry, sync bool) {
	if err := s.tr.write(e, sync); err != nil && s.trErr == nil {
		s.trErr = err
	}
}

// lineSplitter cuts a stream into lines as it is written to it and hands
// each complete line (without its newline) to handle. A line longer than
// max is skipped without being kept. It is not safe for concurrent use.
type lineSplitter struct {
	max      int
	handle   func(line []byte, n int) // n: the 1-based line number
	partial  []byte                   // the current line so far
	skipping bool                     // the current line is over max
	line     int                      // lines seen
}

// write splits b; it never fails.
func (s *lineSplitter) write(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if !s.skipping {
			if len(s.partial)+len(chunk) > s.max {
				s.skipping = true
				s.partial = s.partial[:0]
			} else {
				s.partial = append(s.partial, chunk...)
			}
		}
		if i < 0 {
			break
		}
		s.endLine()
		b = b[i+1:]
	}
}

// endLine hands on the line collected so far.
func (s *lineSplitter) endLine() {
	s.line++
	if !s.skipping {
		s.handle(s.partial, s.line)
	}
	s.partial = s.partial[:0]
	s.skipping = false
}

// flush ends a last line that had no newline.
func (s *lineSplitter) flush() {
	if len(s.partial) > 0 || s.skipping {
		s.endLine()
	}
}

// errStalled is the cause of a run ended by its stallWatch.
var errStalled = errors.New("no progress")

// stallWatch follows a program's events: errors it reports (a provider it
// cannot reach, a stream it retries) and everything else, which counts as
// progress. Once at least two error events came and nothing else for
// limit, the program is stalled. Its methods are safe for concurrent use.
type stallWatch struct {
	limit time.Duration
	now   func() time.Time

	mu           sync.Mutex
	lastProgress time.Time
	errs         int // error events since the last progress
	lastErr      string
}

func newStallWatch(limit time.Duration, now func() time.Time) *stallWatch {
	if limit <= 0 {
		limit = DefaultStallTimeout
	}
	if now == nil {
		now = time.Now
	}
	return &stallWatch{limit: limit, now: now, lastProgress: now()}
}

// progress records an event that is not an error.
func (w *stallWatch) progress() {
	w.mu.Lock()
	w.lastProgress, w.errs = w.now(), 0
	w.mu.Unlock()
}

// errorEvent records an error event saying msg.
func (w *stallWatch) errorEvent(msg string) {
	w.mu.Lock()
	w.errs++
	if msg != "" {
		w.lastErr = msg
	}
	w.mu.Unlock()
}

// lastError is the message of the last error event, or "".
func (w *stallWatch) lastError() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// stalled reports whether the program is stalled now.
func (w *stallWatch) stalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errs >= 2 && w.now().Sub(w.lastProgress) >= w.limit
}

// watch cancels the run with errStalled once it is stalled, and returns
// when ctx is done.
func (w *stallWatch) watch(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(min(max(w.limit/20, 10*time.Millisecond), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if w.stalled() {
				cancel(errStalled)
				return
			}
		}
	}
}

// activity hands Turn.Activity what the agent does now, once per change.
type activity struct {
	tell func(string)
	last string
}

// set reports what, unless it is what was reported last.
func (a *activity) set(what string) {
	if a.tell == nil || what == "" || what == a.last {
		return
	}
	a.last = what
	a.tell(what)
}

// oneLine shortens s for an activity: its first line, at most 80 bytes
// (cut on a rune boundary, marked with "…").
func oneLine(s string) string {
	const limit = 80
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = strings.TrimSpace(s[:i]), true
	}
	if len(s) > limit {
		s = s[:limit]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		cut = true
	}
	if cut {
		s += "…"
	}
	return s
}

// relPath shows path relative to the workspace when it lies inside it.
func relPath(workspace, path string) string {
	if workspace == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(workspace, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return rel
}
