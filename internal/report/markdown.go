package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/templates"
)

// mdMaxCell is how much of a summary or a finding a Markdown cell keeps.
const mdMaxCell = 160

// Markdown writes r compactly, for a pull request or $GITHUB_STEP_SUMMARY:
// status, budgets, the turns and the features as tables. Outside text is
// one line per cell, its control characters made visible, and Markdown and
// HTML in it escaped.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## grub: task `%s` is %s\n\n", r.Task, r.Status)
	fmt.Fprintf(&b, "**Goal:** %s\n\n", mdText(r.Goal, 0))
	if r.StopReason != "" {
		fmt.Fprintf(&b, "**Stopped:** %s\n\n", mdText(r.StopReason, 0))
	}
	bu := r.Budgets
	fmt.Fprintf(&b, "%d/%d features pass · %d turns (limit %s) · %d tokens (budget %s) · %s (budget %s)",
		r.Features.Passing, r.Features.Total, bu.Iterations.Used, limitText(bu.Iterations.Limit),
		bu.Tokens.Used, limitText(bu.Tokens.Limit), duration(float64(bu.TimeSeconds.Used)), durationLimit(bu.TimeSeconds.Limit))
	if c := bu.CostUSD; c != nil {
		fmt.Fprintf(&b, " · %s", templates.FormatUSD(c.Used))
		if c.Limit > 0 {
			fmt.Fprintf(&b, " (budget %s)", templates.FormatUSD(c.Limit))
		}
	}
	b.WriteString("\n\n")
	if len(r.Caught) > 0 {
		var parts []string
		for _, c := range r.Caught {
			parts = append(parts, fmt.Sprintf("%d × %s", c.Count, kindText(c.Kind)))
		}
		fmt.Fprintf(&b, "The referee caught: %s.\n\n", strings.Join(parts, ", "))
	}
	if len(r.Failed) > 0 {
		var parts []string
		for _, c := range r.Failed {
			parts = append(parts, fmt.Sprintf("%d × %s", c.Count, kindText(c.Kind)))
		}
		fmt.Fprintf(&b, "Turns that failed without a catch: %s.\n\n", strings.Join(parts, ", "))
	}
	b.WriteString("| turn | commit | decision | feature | time | verification | tokens | what happened |\n")
	b.WriteString("|---:|---|---|---|---:|---|---:|---|\n")
	for _, t := range r.Turns {
		b.WriteString(mdTurn(t))
	}
	if len(r.Features.Items) > 0 {
		b.WriteString("\n| feature | passes | turn | evidence |\n|---|---|---:|---|\n")
		for _, f := range r.Features.Items {
			pass, turn := "no", ""
			if f.Passes {
				pass = "yes"
			}
			if f.PassedIn > 0 {
				turn = fmt.Sprintf("#%d", f.PassedIn)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", mdCode(f.ID), pass, turn, mdText(f.Evidence, mdMaxCell))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdTurn(t Turn) string {
	commit := ""
	if t.Commit != "" {
		commit = "`" + shortHash(t.Commit) + "`"
	}
	var checks []string
	for _, c := range t.ShownChecks() {
		name := c.Name
		if c.Feature != "" {
			name += " `" + mdCode(c.Feature) + "`"
		}
		checks = append(checks, name+" "+resultText(c))
	}
	if a := t.Audit; a != nil {
		checks = append(checks, fmt.Sprintf("completion audit %d of %d passed", a.Passed, a.Checks))
	}
	tokens, dur := "", ""
	if t.Recorded {
		tokens = fmt.Sprint(t.Usage.Tokens)
		dur = duration(t.DurationSeconds)
	}
	if t.Usage != nil && t.Usage.CostUSD != nil {
		tokens = strings.TrimPrefix(tokens+" · "+templates.FormatUSD(*t.Usage.CostUSD), " · ")
	}
	what := mdText(t.Summary, mdMaxCell)
	for _, f := range t.Findings {
		what += "<br>**" + kindText(f.Kind) + ":** " + mdText(f.Text, mdMaxCell)
	}
	if r := t.RefusedText(); r != "" {
		what += "<br>**refused:** " + mdText(r, mdMaxCell)
	}
	feature := ""
	if t.Feature != "" {
		feature = "`" + mdCode(t.Feature) + "`"
		if t.Flipped != "" {
			feature += " ✓"
		}
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s | %s |\n", t.Iteration, commit, orQ(t.Decision), feature, dur,
		strings.Join(checks, ", "), tokens, what)
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func durationLimit(s int64) string {
	if s <= 0 {
		return "none"
	}
	return duration(float64(s))
}

// mdText is outside text as one line of Markdown that renders as the
// text itself: control characters made visible, newlines as `\n`, HTML
// and Markdown punctuation escaped, cut to max runes (0: whole).
func mdText(s string, max int) string {
	s = termsafe.Line(s)
	if r := []rune(s); max > 0 && len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '|':
			b.WriteString("\\|")
		case '\\', '`', '*', '_', '[', ']', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mdCode is text for inside a code span: backticks cannot be escaped there,
// so they are replaced, and a pipe would end the table cell.
func mdCode(s string) string {
	s = termsafe.Line(s)
	s = strings.ReplaceAll(s, "`", "'")
	return strings.ReplaceAll(s, "|", "\\|")
}
