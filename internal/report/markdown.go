package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/grub-dev/grub/harness"
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
	if len(r.Next) > 0 {
		b.WriteString("**What next:**\n\n")
		for _, n := range r.Next {
			fmt.Fprintf(&b, "- `%s`: %s\n", mdCode(n.Command), mdText(n.Why, 0))
		}
		b.WriteString("\n")
	}
	bu := r.Budgets
	fmt.Fprintf(&b, "%d/%d features pass · %s turns (limit %s) · %s tokens (budget %s) · %s (budget %s) · cost %s (budget %s)\n\n",
		r.Features.Passing, r.Features.Total, harness.FormatCount(bu.Iterations.Used), limitText(bu.Iterations.Limit),
		harness.FormatCount(bu.Tokens.Used), limitText(bu.Tokens.Limit), duration(float64(bu.TimeSeconds.Used)), durationLimit(bu.TimeSeconds.Limit),
		bu.CostText(), bu.CostLimitText())
	if len(r.Outcomes) > 0 {
		fmt.Fprintf(&b, "Turns by grub's verdict: %s.\n\n", r.OutcomesText())
	}
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
	b.WriteString("| turn | commit | outcome | feature | time | verification | tokens | what happened |\n")
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
		tokens = harness.FormatCount(t.Usage.Tokens)
		dur = duration(t.DurationSeconds)
	}
	if t.Usage != nil && t.Usage.CostUSD != nil {
		tokens = strings.TrimPrefix(tokens+" · "+templates.FormatUSD(*t.Usage.CostUSD), " · ")
	}
	// grub's finding first, then the agent's claim, marked as the agent's.
	var what []string
	if g := t.GrubSays(); g != "" {
		what = append(what, "**grub:** "+mdText(g, 0))
	}
	for _, f := range t.Findings {
		what = append(what, "**"+kindText(f.Kind)+":** "+mdText(f.Text, mdMaxCell))
	}
	if r := t.RefusedText(); r != "" {
		what = append(what, "**refused:** "+mdText(r, mdMaxCell))
	}
	what = append(what, "*"+mdText(t.ClaimLabel(), 0)+":* "+mdText(t.Summary, mdMaxCell))
	feature := ""
	if t.Feature != "" {
		feature = "`" + mdCode(t.Feature) + "`"
		if t.Flipped != "" {
			feature += " ✓"
		}
	}
	outcome := "**" + t.OutcomeText() + "**"
	if t.Status != "" && t.Status != "running" {
		outcome += "<br>task " + mdText(t.Status, 0)
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s | %s |\n", t.Iteration, commit, outcome, feature, dur,
		strings.Join(checks, ", "), tokens, strings.Join(what, "<br>"))
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
