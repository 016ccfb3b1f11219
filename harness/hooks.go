package harness

import (
	"fmt"
	"time"
)

// Hooks are the user's own commands grub runs around a task's turns
// (grub start, resume and edit: --on-turn, --on-stop, --hook-timeout).
// They are stored in state so that every run of the task, on any machine,
// keeps them. Absent (zero) in files written before they existed.
type Hooks struct {
	// OnTurn runs through sh -c after each turn's commit; its failure
	// pauses the task.
	OnTurn string `json:"onTurn,omitempty"`
	// OnStop runs through sh -c once when a run of the task stops.
	OnStop string `json:"onStop,omitempty"`
	// TimeoutSeconds bounds each run of a hook (0: DefaultHookTimeout).
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
}

// DefaultHookTimeout bounds a hook when the task sets no timeout.
const DefaultHookTimeout = 5 * time.Minute

// Timeout is how long one run of a hook may take.
func (h Hooks) Timeout() time.Duration {
	if h.TimeoutSeconds > 0 {
		return time.Duration(h.TimeoutSeconds) * time.Second
	}
	return DefaultHookTimeout
}

// HookChangeLines describes each hook setting that differs between old
// and new, as "on-turn hook none → git push origin HEAD:grub/0a1b2c3d".
func HookChangeLines(old, new Hooks) []string {
	var lines []string
	cmd := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	if old.OnTurn != new.OnTurn {
		lines = append(lines, fmt.Sprintf("on-turn hook %s → %s", cmd(old.OnTurn), cmd(new.OnTurn)))
	}
	if old.OnStop != new.OnStop {
		lines = append(lines, fmt.Sprintf("on-stop hook %s → %s", cmd(old.OnStop), cmd(new.OnStop)))
	}
	if old.Timeout() != new.Timeout() {
		lines = append(lines, fmt.Sprintf("hook timeout %s → %s", FormatSeconds(int64(old.Timeout()/time.Second)), FormatSeconds(int64(new.Timeout()/time.Second))))
	}
	return lines
}
