package harness

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/templates"
)

// Edit is a change of a task's goal or limits that the user asked for
// with grub edit.
type Edit struct {
	At time.Time
	// Goal holds the goal before and after the edit; nil when the goal
	// did not change.
	Goal *GoalChange
	// OldLimits and NewLimits are the task's limits before and after the
	// edit; only the limits that differ are logged.
	OldLimits, NewLimits Limits
	// OldSandbox and NewSandbox are the sandbox settings before and after
	// the edit; nil when the edit did not touch them.
	OldSandbox, NewSandbox *Sandbox
	// OldHooks and NewHooks are the hooks before and after the edit; nil
	// when the edit did not touch them.
	OldHooks, NewHooks *Hooks
}

// EditEntry is the progress-log entry of an edit. grub edit writes it when
// it changes an idle task itself, and the controller when it applies the
// request of a task it runs, so the log reads the same either way:
//
//	## Edited by the user
//
//	- At: 2026-03-01T12:00:00Z
//	- Old goal: …
//	- New goal: …
//	- Limit: max iterations 25 → 40
func EditEntry(e Edit) string {
	var b strings.Builder
	b.WriteString("\n## Edited by the user\n\n")
	fmt.Fprintf(&b, "- At: %s\n", e.At.UTC().Format(time.RFC3339))
	if e.Goal != nil {
		fmt.Fprintf(&b, "- Old goal: %s\n", indentListItem(e.Goal.Old))
		fmt.Fprintf(&b, "- New goal: %s\n", indentListItem(e.Goal.New))
	}
	lines := LimitChangeLines(e.OldLimits, e.NewLimits)
	for _, l := range lines {
		fmt.Fprintf(&b, "- Limit: %s\n", l)
	}
	sandboxChanged := e.OldSandbox != nil && e.NewSandbox != nil && SandboxSummary(*e.OldSandbox) != SandboxSummary(*e.NewSandbox)
	if sandboxChanged {
		fmt.Fprintf(&b, "- Sandbox: %s → %s (from the next run)\n", SandboxSummary(*e.OldSandbox), SandboxSummary(*e.NewSandbox))
	}
	var hooks []string
	if e.OldHooks != nil && e.NewHooks != nil {
		hooks = HookChangeLines(*e.OldHooks, *e.NewHooks)
	}
	for _, l := range hooks {
		fmt.Fprintf(&b, "- Hook: %s\n", l)
	}
	if e.Goal == nil && len(lines) == 0 && !sandboxChanged && len(hooks) == 0 {
		b.WriteString("- Nothing changed: the limits were already as asked\n")
	}
	return b.String()
}

// SandboxSummary describes sandbox settings in one line: "default",
// "read-only, no network, allow /a /b, pass GH_TOKEN" or "default,
// network only to @go example.com".
func SandboxSummary(s Sandbox) string {
	parts := []string{"default"}
	if s.Mode != "" {
		parts[0] = s.Mode
	}
	if s.NoNetwork {
		parts = append(parts, "no network")
	}
	if len(s.AllowDomains) > 0 {
		parts = append(parts, "network only to "+strings.Join(s.AllowDomains, " "))
	}
	if len(s.Allow) > 0 {
		parts = append(parts, "allow "+strings.Join(s.Allow, " "))
	}
	if len(s.PassEnv) > 0 {
		parts = append(parts, "pass "+strings.Join(s.PassEnv, " "))
	}
	if len(s.Hide) > 0 {
		parts = append(parts, "hide "+strings.Join(s.Hide, " "))
	}
	if len(s.Show) > 0 {
		parts = append(parts, "show "+strings.Join(s.Show, " "))
	}
	return strings.Join(parts, ", ")
}

// indentListItem indents the lines after the first of text so that they
// stay inside a markdown list item.
func indentListItem(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t\r"); l != "" {
			lines[i] = "  " + l
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// LimitChangeLines describes each limit that differs between old and new,
// as "token budget 2,000,000 → none".
func LimitChangeLines(old, new Limits) []string {
	var lines []string
	add := func(name string, from, to string) {
		if from != to {
			lines = append(lines, fmt.Sprintf("%s %s → %s", name, from, to))
		}
	}
	budget := func(n int64, f func(int64) string) string {
		if n == 0 {
			return "none"
		}
		return f(n)
	}
	add("max iterations", fmt.Sprint(old.MaxIterations), fmt.Sprint(new.MaxIterations))
	add("max consecutive failures", fmt.Sprint(old.MaxConsecutiveFailures), fmt.Sprint(new.MaxConsecutiveFailures))
	add("token budget", budget(old.TokenBudget, FormatCount), budget(new.TokenBudget, FormatCount))
	add("time budget", budget(old.TimeBudgetSeconds, FormatSeconds), budget(new.TimeBudgetSeconds, FormatSeconds))
	add("cost budget", costBudget(old.CostBudgetUSD), costBudget(new.CostBudgetUSD))
	add("max initializer failures", fmt.Sprint(old.MaxInitializerFailures), fmt.Sprint(new.MaxInitializerFailures))
	add("max blocked", fmt.Sprint(old.MaxBlocked), fmt.Sprint(new.MaxBlocked))
	add("turn timeout", FormatSeconds(old.TurnTimeoutSeconds), FormatSeconds(new.TurnTimeoutSeconds))
	add("init timeout", FormatSeconds(old.InitTimeoutSeconds), FormatSeconds(new.InitTimeoutSeconds))
	add("regression checks", fmt.Sprint(old.RegressionChecks), fmt.Sprint(new.RegressionChecks))
	add("protected files", protectLine(old.Protect), protectLine(new.Protect))
	return lines
}

func costBudget(usd float64) string {
	if usd == 0 {
		return "none"
	}
	return templates.FormatUSD(usd)
}

// FormatSeconds renders whole seconds the way people say them: "45s",
// "12m30s", "1h12m", "3h". It is how limits, budgets and usage are shown.
func FormatSeconds(seconds int64) string {
	if seconds < 0 {
		seconds = 0
	}
	h, m, s := seconds/3600, seconds/60%60, seconds%60
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%dh%dm", h, m)
	case h > 0:
		return fmt.Sprintf("%dh", h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%dm%ds", m, s)
	case m > 0:
		return fmt.Sprintf("%dm", m)
	default:
		return fmt.Sprintf("%ds", s)
	}
}

// FormatCount renders n with thousands separators: 1234567 → "1,234,567".
// It is how token counts and budgets are shown.
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func protectLine(globs []string) string {
	if len(globs) == 0 {
		return "none"
	}
	return strings.Join(globs, " ")
}
