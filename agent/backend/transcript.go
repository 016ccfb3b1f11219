package backend

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Kinds of transcript entries (TranscriptEntry.Type).
const (
	// EntryRequest records one model request: its usage, retries and the
	// reply's finish reason, text and number of tool calls; or its error.
	EntryRequest = "request"
	// EntryToolCall records a tool call before the tool runs.
	EntryToolCall = "tool_call"
	// EntryToolResult records what the tool returned.
	EntryToolResult = "tool_result"
	// EntryContext records the turn context grub gave the model (the
	// message that opens the turn, and any update appended later).
	EntryContext = "context"
	// EntryFinal records the turn's final message.
	EntryFinal = "final"
	// EntryError records why a turn ended without a final message, or
	// with an error.
	EntryError = "error"

	// The next kinds are written by the claude and codex backends, from
	// the events their programs print.

	// EntryMessage records an assistant message the program printed that
	// is not tied to one model request (Codex's agent_message items).
	EntryMessage = "message"
	// EntryUsage records usage the program reported for more than one
	// request: a Codex turn's, or Claude Code's totals (with their cost).
	EntryUsage = "usage"
	// EntryNotice records an error the program reported and went on from
	// (a stream it retries, a provider it cannot reach yet).
	EntryNotice = "notice"
)

// TranscriptEntry is one line of a turn transcript, the file the turn names
// (agent.Turn.TranscriptFile). Fields that do not apply to an entry's Type
// are omitted.
type TranscriptEntry struct {
	Type string `json:"type"`
	Time string `json:"time,omitempty"` // RFC 3339, with fractions of a second

	// request
	N                 int    `json:"n,omitempty"` // 1-based request number within the turn
	InputTokens       int64  `json:"inputTokens,omitempty"`
	CachedInputTokens int64  `json:"cachedInputTokens,omitempty"`
	OutputTokens      int64  `json:"outputTokens,omitempty"`
	Estimated         bool   `json:"estimated,omitempty"`
	Retries           int    `json:"retries,omitempty"`
	FinishReason      string `json:"finishReason,omitempty"`
	ToolCalls         int    `json:"toolCalls,omitempty"`
	WrapUp            bool   `json:"wrapUp,omitempty"` // the budget wrap-up request
	Elided            int    `json:"elided,omitempty"` // tool results stubbed in this request to save context

	// tool_call and tool_result
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
	Bytes     int    `json:"bytes,omitempty"`     // size of Text
	SpillPath string `json:"spillPath,omitempty"` // where a large result was written in full

	// request (the reply's text), tool_result, final and context
	Text string `json:"text,omitempty"`

	// usage
	CostUSD float64 `json:"costUSD,omitempty"`

	// request, error and notice
	Error string `json:"error,omitempty"`
}

// transcript appends entries to a turn's transcript file. Every write goes
// straight to the file; entries that record intent (tool calls) are synced
// before the action they describe.
type transcript struct {
	path string
	f    *os.File
	now  func() time.Time
}

// openTranscript opens (appending) the transcript file path, creating its
// folder. An empty path gives a transcript that writes nothing.
func openTranscript(path string, now func() time.Time) (*transcript, error) {
	tr := &transcript{now: now}
	if path == "" {
		return tr, nil
	}
	tr.path = path
	if err := os.MkdirAll(filepath.Dir(tr.path), 0o755); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	f, err := os.OpenFile(tr.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	tr.f = f
	return tr, nil
}

// write appends e, stamped with the time, and syncs the file when sync is
// set.
func (tr *transcript) write(e TranscriptEntry, sync bool) error {
	if tr.f == nil {
		return nil
	}
	e.Time = tr.now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("transcript %s: %w", tr.path, err)
	}
	if _, err := tr.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("transcript %s: %w", tr.path, err)
	}
	if sync {
		if err := tr.f.Sync(); err != nil {
			return fmt.Errorf("transcript %s: %w", tr.path, err)
		}
	}
	return nil
}

// close syncs and closes the file.
func (tr *transcript) close() error {
	if tr.f == nil {
		return nil
	}
	err := errors.Join(tr.f.Sync(), tr.f.Close())
	tr.f = nil
	if err != nil {
		return fmt.Errorf("transcript %s: %w", tr.path, err)
	}
	return nil
}

// ReadTranscript decodes a transcript file. A line that is not a JSON
// object is an error naming the file and the line number.
func ReadTranscript(path string) ([]TranscriptEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []TranscriptEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for line := 1; sc.Scan(); line++ {
		var e TranscriptEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("transcript %s: line %d: %w", path, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("transcript %s: %w", path, err)
	}
	return out, nil
}
