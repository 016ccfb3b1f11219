package report

import (
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/templates"
)

//go:embed report.html.tmpl
var htmlText string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	// text makes control characters in outside text visible (an escape
	// sequence shows as \x1b[…); html/template then escapes the markup.
	"text":     termsafe.Escape,
	"date":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"clock":    func(t time.Time) string { return t.UTC().Format("01-02 15:04") },
	"short":    shortHash,
	"usd":      templates.FormatUSD,
	"duration": duration,
	"seconds":  func(s int64) string { return duration(float64(s)) },
	"limit":    limitText,
	"kind":     kindText,
	"result":   resultText,
	"count":    harness.FormatCount,
}).Parse(htmlText))

// htmlData is what the page is made of; a chart with nothing to draw
// (Has… false) is left out.
type htmlData struct {
	R                           *Report
	Burn, Tokens, Cost          chart
	HasBurn, HasTokens, HasCost bool
}

// HTML writes r as one self-contained page: inline CSS and SVG, no
// scripts, nothing fetched from the network.
func HTML(w io.Writer, r *Report) error {
	d := htmlData{R: r}
	d.Burn, d.HasBurn = burnUp(r.Turns, r.Features.Total)
	d.Tokens, d.HasTokens = tokenBars(r.Turns)
	d.Cost, d.HasCost = costBars(r.Turns)
	return htmlTemplate.Execute(w, d)
}

// shortHash is the first 7 characters of a commit hash.
func shortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// duration writes seconds as 45s, 12m03s or 2h05m.
func duration(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m" + pad2(int(d%time.Minute/time.Second)) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + pad2(int(d%time.Hour/time.Minute)) + "m"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

func limitText(n int64) string {
	if n <= 0 {
		return "none"
	}
	return harness.FormatCount(n)
}

// kindText is a finding kind in words.
func kindText(kind string) string {
	switch kind {
	case "completion_rejected":
		return "completion claim rejected"
	case "illegal_edit":
		return "illegal edit restored"
	case "tampering":
		return "tampering undone"
	case "verification_failed":
		return "failed verification"
	case "plan_rejected":
		return "plan rejected"
	case "no_decision":
		return "no valid decision"
	case "timeout":
		return "turn timed out"
	case "agent_error":
		return "agent failed"
	case "setup_error":
		return "agent cannot work (setup)"
	case "regression":
		return "regression flipped back"
	}
	return "failure"
}

func resultText(c Check) string {
	switch c.Result {
	case "passed":
		return "passed"
	case "timed_out":
		return "timed out"
	}
	return "failed (exit " + strconv.Itoa(c.ExitCode) + ")"
}
