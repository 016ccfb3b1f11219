// Context elision for the built-in agent: when a request nears the model's
// context window, the oldest large tool results are replaced in the request
// by a stub that points at the transcript, which keeps them whole.

package backend

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/internal/llm"
)

const (
	// contextPressurePercent is the share of the context window above
	// which old large tool results are replaced by a stub in the request.
	contextPressurePercent = 80
	// elideMinBytes is the smallest tool result worth replacing by a stub.
	elideMinBytes = 1024
)

// view returns the conversation as it is sent: tool results stubbed where
// the context is under pressure. It also returns how many are stubbed.
func (r *turnRun) view() ([]llm.Message, int) {
	r.elideUnderPressure()
	out := append([]llm.Message(nil), r.msgs...)
	for i := range r.elided {
		out[i].Content = r.stub(i)
	}
	return out, len(r.elided)
}

// elideUnderPressure marks the oldest large tool results as stubbed until
// the estimated request fits in contextPressurePercent of the context
// window. The results of the latest tool calls are kept.
func (r *turnRun) elideUnderPressure() {
	limit := int64(r.cfg.ContextWindow) * contextPressurePercent / 100
	chars := 0
	for _, d := range r.defs {
		chars += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	for i, m := range r.msgs {
		if r.elided[i] {
			chars += len(r.stub(i))
		} else {
			chars += llm.MessageChars(m)
		}
	}
	if llm.EstimateTokens(chars) <= limit {
		return
	}
	latest := len(r.msgs)
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if r.msgs[i].Role == llm.RoleAssistant {
			latest = i
			break
		}
	}
	for i := 0; i < latest && llm.EstimateTokens(chars) > limit; i++ {
		m := r.msgs[i]
		if m.Role != llm.RoleTool || r.elided[i] || len(m.Content) < elideMinBytes {
			continue
		}
		r.elided[i] = true
		chars += len(r.stub(i)) - len(m.Content)
	}
}

// stub is what replaces an elided tool result.
func (r *turnRun) stub(i int) string {
	m := r.msgs[i]
	s := fmt.Sprintf("[output elided to save context; tool call %s", m.ToolCallID)
	if r.stubRef != "" {
		s = fmt.Sprintf("[output elided to save context; see transcript %s, tool call %s", r.stubRef, m.ToolCallID)
	}
	if p := r.spills[i]; p != "" {
		s += ", full output in " + p
	}
	return s + "]"
}

// stubRef names the transcript at path for the model: relative to the
// workspace when it is inside it; "" when the turn keeps no transcript.
func stubRef(t agent.Turn, path string) string {
	if path == "" {
		return ""
	}
	if t.Workspace != "" {
		if rel, err := filepath.Rel(t.Workspace, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return path
}
