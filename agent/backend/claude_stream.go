package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/grub-dev/grub/agent"
)

// claudeEvent is one line of `claude -p --output-format stream-json
// --verbose`, with only the fields grub reads: "system" (subtype "init",
// and "api_retry" while it retries the API), "assistant" and "user"
// messages, and the final "result" (decoded again as a claudeResult).
type claudeEvent struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message *struct {
		ID      string               `json:"id"`
		Model   string               `json:"model"`
		Content []claudeContentBlock `json:"content"`
		Usage   *claudeUsage         `json:"usage"`
	} `json:"message"`
	// api_retry
	Error       json.RawMessage `json:"error"`
	ErrorStatus json.RawMessage `json:"error_status"`
}

// claudeContentBlock is one block of a message's content.
type claudeContentBlock struct {
	Type string `json:"type"` // text, thinking, tool_use, tool_result
	Text string `json:"text"`
	// tool_use
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// tool_result
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a string or a list of blocks
	IsError   bool            `json:"is_error"`
}

// claudeOutcome is what a claude stream said about a turn.
type claudeOutcome struct {
	// Result is the result object, when Err is nil.
	Result claudeResult
	// Err says why there is no usable result object.
	Err error
	// Usage is the result's usage with the stream's request count, or,
	// without a result, the usage of the assistant messages seen.
	Usage agent.Usage
}

// claudeStream reads Claude Code's stream-json output as it is written to
// it: it writes the transcript, reports the activity, feeds the stall
// watch and keeps the usage so far. proc writes it from one goroutine;
// the stall watch reads its own state.
type claudeStream struct {
	eventStream

	reqN      map[string]int         // assistant message id -> request number
	msgUsage  map[string]claudeUsage // latest usage per message id
	written   map[string]claudeUsage // usage already in the transcript per id
	anonymous int                    // assistant messages without an id
	toolNames map[string]string      // tool_use id -> tool name

	result    *claudeResult
	resultErr error // the last result line that did not decode
	malformed error
}

func newClaudeStream(tr *transcript, workspace string, tell func(string), stall *stallWatch) *claudeStream {
	s := &claudeStream{
		reqN: map[string]int{}, msgUsage: map[string]claudeUsage{}, written: map[string]claudeUsage{},
		toolNames: map[string]string{},
	}
	s.eventStream = newEventStream(tr, workspace, tell, stall, s.handle)
	return s
}

// handle applies one line.
func (s *claudeStream) handle(line []byte, n int) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var e claudeEvent
	err := json.Unmarshal(line, &e)
	if err == nil && e.Type == "" {
		err = errors.New(`no "type" field`)
	}
	if err != nil {
		if s.malformed == nil {
			s.malformed = fmt.Errorf("standard output line %d is not a JSON event: %v: %s", n, err, outputHead(line))
		}
		return
	}
	switch e.Type {
	case "system":
		if e.Subtype == "api_retry" {
			s.apiRetry(e)
			return
		}
	case "assistant":
		s.assistant(e)
	case "user":
		s.user(e)
	case "result":
		r, err := decodeClaudeObject(line)
		if err == nil {
			err = r.check()
		}
		if err != nil {
			s.resultErr = err
			break
		}
		s.result, s.resultErr = &r, nil
		if u := s.finalUsage(); u.Tokens() > 0 || u.CostReported {
			s.write(TranscriptEntry{Type: EntryUsage, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
				OutputTokens: u.OutputTokens, CostUSD: u.CostUSD}, false)
		}
		if !r.failed() {
			s.write(TranscriptEntry{Type: EntryFinal, Text: r.Result}, true)
		}
	}
	s.stall.progress()
}

// apiRetry records Claude Code retrying the API.
func (s *claudeStream) apiRetry(e claudeEvent) {
	msg := "API request failed; retrying"
	if st := strings.Trim(string(bytes.TrimSpace(e.ErrorStatus)), `"`); st != "" && st != "null" {
		msg += " (status " + st + ")"
	}
	if said := rawText(e.Error); said != "" {
		msg += ": " + said
	}
	s.stall.errorEvent(msg)
	s.write(TranscriptEntry{Type: EntryNotice, Error: msg}, false)
	s.act.set("retrying the API")
}

// assistant records one assistant message event: Claude Code prints one
// per content block, the blocks of one API response sharing its message
// id and carrying its usage so far.
func (s *claudeStream) assistant(e claudeEvent) {
	if e.Message == nil {
		return
	}
	id := e.Message.ID
	if e.Message.Model == "<synthetic>" {
		// Claude Code's own text (an API error it reports), no request.
		s.write(TranscriptEntry{Type: EntryRequest, Text: claudeText(e.Message.Content)}, false)
		return
	}
	if id == "" {
		s.anonymous++
		id = "\x00" + strconv.Itoa(s.anonymous)
	}
	n, seen := s.reqN[id]
	if !seen {
		n = len(s.reqN) + 1
		s.reqN[id] = n
	}
	entry := TranscriptEntry{Type: EntryRequest, N: n}
	if u := e.Message.Usage; u != nil && !u.negative() {
		// The transcript's request entries add up to the message's usage.
		s.msgUsage[id] = *u
		was := s.written[id]
		s.written[id] = *u
		d := claudeUsage{
			InputTokens:              max(u.InputTokens-was.InputTokens, 0),
			CacheCreationInputTokens: max(u.CacheCreationInputTokens-was.CacheCreationInputTokens, 0),
			CacheReadInputTokens:     max(u.CacheReadInputTokens-was.CacheReadInputTokens, 0),
			OutputTokens:             max(u.OutputTokens-was.OutputTokens, 0),
		}.grub()
		entry.InputTokens, entry.CachedInputTokens, entry.OutputTokens = d.InputTokens, d.CachedInputTokens, d.OutputTokens
	}
	var texts []string
	var calls []claudeContentBlock
	for _, b := range e.Message.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "thinking", "redacted_thinking":
			s.act.set("thinking")
		case "tool_use", "server_tool_use":
			calls = append(calls, b)
		}
	}
	entry.Text, entry.ToolCalls = strings.Join(texts, "\n"), len(calls)
	s.write(entry, false)
	for _, c := range calls {
		s.toolNames[c.ID] = c.Name
		s.write(TranscriptEntry{Type: EntryToolCall, ID: c.ID, Name: c.Name, Arguments: string(c.Input)}, true)
		s.act.set(claudeToolActivity(c.Name, c.Input, s.workspace))
	}
	if len(calls) == 0 && len(texts) > 0 {
		s.act.set("writing")
	}
}

// claudeText joins the text blocks of a message.
func claudeText(blocks []claudeContentBlock) string {
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// user records the tool results Claude Code hands back to the model.
func (s *claudeStream) user(e claudeEvent) {
	if e.Message == nil {
		return
	}
	results := 0
	for _, b := range e.Message.Content {
		if b.Type != "tool_result" {
			continue
		}
		results++
		text := rawText(b.Content)
		s.write(TranscriptEntry{Type: EntryToolResult, ID: b.ToolUseID, Name: s.toolNames[b.ToolUseID],
			IsError: b.IsError, Bytes: len(text), Text: text}, false)
	}
	if results > 0 {
		s.act.set("thinking")
	}
}

// streamUsage is the usage of the assistant messages seen: the last
// figure of each message id, one request each.
func (s *claudeStream) streamUsage() (claudeUsage, int64) {
	var sum claudeUsage
	for _, u := range s.msgUsage {
		sum.InputTokens = addTokens(sum.InputTokens, u.InputTokens)
		sum.CacheCreationInputTokens = addTokens(sum.CacheCreationInputTokens, u.CacheCreationInputTokens)
		sum.CacheReadInputTokens = addTokens(sum.CacheReadInputTokens, u.CacheReadInputTokens)
		sum.OutputTokens = addTokens(sum.OutputTokens, u.OutputTokens)
	}
	return sum, int64(len(s.reqN))
}

// finalUsage is the turn's usage: the result's (each count the larger of
// it and the stream's) when there is one, the stream's otherwise; see
// Claude.
func (s *claudeStream) finalUsage() agent.Usage {
	seen, requests := s.streamUsage()
	if s.result == nil {
		u := seen.grub()
		u.Requests = requests
		return u
	}
	r := *s.result
	m, _, _ := r.modelUsageSum()
	u := r.usage()
	t := maxClaudeUsage(maxClaudeUsage(r.Usage, m), seen).grub()
	u.InputTokens, u.CachedInputTokens, u.OutputTokens = t.InputTokens, t.CachedInputTokens, t.OutputTokens
	if requests > 0 {
		u.Requests = requests
	}
	return u
}

// finish ends a last line without a newline and says what the stream
// amounted to.
func (s *claudeStream) finish() claudeOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines.flush()
	o := claudeOutcome{Usage: s.finalUsage()}
	switch {
	case s.result != nil:
		o.Result = *s.result
	case s.resultErr != nil:
		o.Err = s.resultErr
	case s.malformed != nil:
		o.Err = fmt.Errorf("no result message; %w", s.malformed)
	case s.lines.line == 0:
		o.Err = errors.New("its standard output was empty")
	default:
		o.Err = errors.New("its output ended without a result message")
	}
	return o
}

// parseClaudeStream parses a whole stream-json output.
func parseClaudeStream(stdout []byte) claudeOutcome {
	s := newClaudeStream(&transcript{}, "", nil, newStallWatch(0, nil))
	_, _ = s.Write(stdout)
	return s.finish()
}

// claudeToolActivity describes a tool use for the progress display.
func claudeToolActivity(name string, input json.RawMessage, workspace string) string {
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		Path         string `json:"path"`
		NotebookPath string `json:"notebook_path"`
		Pattern      string `json:"pattern"`
		Description  string `json:"description"`
		URL          string `json:"url"`
		Query        string `json:"query"`
	}
	_ = json.Unmarshal(input, &in) // a tool name alone still says something
	file := relPath(workspace, firstOf(in.FilePath, in.NotebookPath, in.Path))
	switch name {
	case "Bash":
		return "Bash: " + oneLine(in.Command)
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		return "editing " + oneLine(file)
	case "Read":
		return "reading " + oneLine(file)
	case "Grep", "Glob":
		return "searching " + oneLine(in.Pattern)
	case "Task", "Agent":
		return "subagent: " + oneLine(in.Description)
	case "TodoWrite":
		return "planning"
	case "WebFetch":
		return "fetching " + oneLine(in.URL)
	case "WebSearch":
		return "searching the web: " + oneLine(in.Query)
	}
	return oneLine(name)
}

// firstOf is the first non-empty string.
func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// rawText is the text of a JSON value an event carries as a string, a
// list of text blocks, or anything else (given as its JSON).
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" || b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	var obj struct {
		Message string          `json:"message"`
		Content json.RawMessage `json:"content"` // an MCP tool result
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Message != "" {
			return obj.Message
		}
		if c := bytes.TrimSpace(obj.Content); len(c) > 0 && c[0] != '{' {
			return rawText(c)
		}
	}
	return string(raw)
}
