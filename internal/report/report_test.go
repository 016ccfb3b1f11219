package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// hostile is agent text that must be shown, never obeyed.
const hostile = "<script>alert(1)</script>\x1b[2J | *bold* `code` [x](https://evil.example/)"

func fixture() Input {
	t0 := time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)
	ev := func(s string) *string { return &s }
	cost := func(f float64) *float64 { return &f }
	list := &featurelist.List{Features: []featurelist.Feature{
		{ID: "parse-args", Category: "cli", Description: "parses its arguments", Passes: true, Evidence: ev("go test ./... passed " + hostile)},
		{ID: "write-out", Category: "cli", Description: "writes the output " + hostile, Passes: true, Evidence: ev("ok")},
		{ID: "docs", Category: "docs", Description: "has a README", Passes: false},
	}}
	st := &harness.State{ID: "0a1b2c3d", Goal: "build a tool\n" + hostile, Status: harness.StatusBudgetLimited, Phase: harness.PhaseExecution,
		StopReason: "the iteration budget (5) is spent", CreatedAt: t0, UpdatedAt: t0.Add(3 * time.Hour), CurrentIteration: 5,
		Limits: harness.Limits{MaxIterations: 5, TokenBudget: 100000, CostBudgetUSD: 2},
		Usage:  harness.Usage{TokensUsed: 4200, Requests: 12, TimeUsedSeconds: 10800, CostUSD: cost(0.75)},
		Agent:  harness.Agent{Kind: harness.AgentOpenAI, Model: "m1"}, FeatureListBaseline: list}
	line := func(n int, feature, flipped string, dec loopstate.Status, passing int, findings ...harness.Finding) harness.TurnRecord {
		return harness.TurnRecord{Version: 1, Iteration: n, Phase: harness.PhaseExecution, Feature: feature, Flipped: flipped,
			Decision: dec, Summary: "turn summary " + hostile, Findings: findings,
			Checks:          []harness.LedgerCheck{{Name: "init.sh", Result: harness.CheckPassed}},
			DurationSeconds: float64(60 * n), Usage: harness.TurnUsage{InputTokens: int64(1000 * n), CachedInputTokens: 200, OutputTokens: 100, Requests: 2, CostUSD: cost(0.15)},
			Passing: passing, Total: 3, Status: harness.StatusRunning, Time: t0.Add(time.Duration(n) * 10 * time.Minute)}
	}
	turns := []harness.TurnRecord{
		line(1, "", "", loopstate.Continue, 0),
		line(2, "parse-args", "parse-args", loopstate.Continue, 1),
		line(3, "write-out", "", loopstate.Continue, 1, harness.Finding{Kind: harness.FindingVerification, Text: "verify failed " + hostile}),
		line(4, "write-out", "write-out", loopstate.Continue, 2, harness.Finding{Kind: harness.FindingCompletionRejected, Text: "1 of 3 pending"}),
		line(4, "write-out", "write-out", loopstate.Continue, 2), // recorded again after a crash: the last line wins
	}
	turns[0].Phase = harness.PhaseInitializer
	turns[2].Refused = []harness.RefusedHost{{Host: "example.org", Count: 3}, {Host: "<b>x</b>", Count: 1}}
	commits := []Commit{
		{Hash: "111111111111", Iteration: 1, Time: t0, Status: "running"},
		{Hash: "222222222222", Iteration: 2, Time: t0, Status: "running"},
		{Hash: "333333333333", Iteration: 3, Time: t0, Status: "running"},
		{Hash: "444444444444", Iteration: 4, Time: t0, Status: "running"},
		{Hash: "555555555555", Iteration: 5, Time: t0, Status: "budget_limited", Summary: "a turn known only from git", CostUSD: cost(0.3)},
	}
	return Input{State: st, Features: list, Turns: turns, Commits: commits, Now: t0.Add(4 * time.Hour)}
}

func TestBuildJoinsLedgerAndCommits(t *testing.T) {
	r := Build(fixture())
	if len(r.Turns) != 5 {
		t.Fatalf("%d turns, want 5", len(r.Turns))
	}
	if r.Turns[3].Commit != "444444444444" || len(r.Turns[3].Findings) != 0 {
		t.Errorf("turn 4 = %+v, want the last ledger line joined with its commit", r.Turns[3])
	}
	if t5 := r.Turns[4]; t5.Recorded || t5.Commit != "555555555555" || t5.Summary != "a turn known only from git" {
		t.Errorf("turn 5 = %+v, want the commit alone", t5)
	}
	if f := r.Features.Items[1]; f.PassedIn != 4 || f.Commit != "444444444444" {
		t.Errorf("write-out passed in %d (%s), want turn 4", f.PassedIn, f.Commit)
	}
	if f := r.Features.Items[2]; f.PassedIn != 0 {
		t.Errorf("a pending feature has a passing turn: %+v", f)
	}
	if len(r.Caught) != 1 || r.Caught[0].Kind != "verification_failed" {
		t.Errorf("caught = %+v", r.Caught)
	}
}

func TestJSONFollowsSchema(t *testing.T) {
	data, err := json.Marshal(Build(fixture()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.ReportOutput, "report", data); err != nil {
		t.Fatal(err)
	}
	empty := fixture()
	empty.Features, empty.Turns, empty.Commits = nil, nil, nil
	data, _ = json.Marshal(Build(empty))
	if err := schemas.Validate(schemas.ReportOutput, "report", data); err != nil {
		t.Fatalf("a report without turns: %v", err)
	}
}

func renderHTML(t *testing.T, in Input) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, Build(in)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

func TestHTMLHasEveryFeatureAndTurn(t *testing.T) {
	out, doc := renderHTML(t, fixture())
	rows := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "tr" && attr(n, "id") != "" {
			rows[attr(n, "id")] = n
		}
	})
	for _, f := range fixture().Features.Features {
		row := rows["feature-"+f.ID]
		if row == nil || !strings.Contains(textOf(row), f.ID) {
			t.Errorf("feature %s has no row", f.ID)
		}
	}
	for i := 1; i <= 5; i++ {
		if rows["turn-"+string(rune('0'+i))] == nil {
			t.Errorf("turn %d has no row in the timeline", i)
		}
	}
	if row := rows["turn-3"]; row == nil || !strings.Contains(textOf(row), "3333333") || !strings.Contains(textOf(row), "failed verification") {
		t.Errorf("turn 3's row lacks its commit or what the referee caught")
	}
	if row := rows["turn-3"]; row == nil || !strings.Contains(textOf(row), "refused: example.org ×3, <b>x</b> ×1") {
		t.Errorf("turn 3's row lacks the hosts the network allowlist refused")
	}
	if row := rows["feature-write-out"]; row == nil || !strings.Contains(textOf(row), "turn 4") {
		t.Errorf("write-out's row does not name the turn that passed it")
	}
	for _, want := range []string{"budget_limited", "the iteration budget (5) is spent", "$0.75", "$2.00"} {
		if !strings.Contains(textOf(doc), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	_ = out
}

var externalURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9]`)

func TestHTMLIsSelfContained(t *testing.T) {
	_, doc := renderHTML(t, fixture())
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if n.Data == "script" || n.Data == "iframe" || n.Data == "object" || n.Data == "embed" || n.Data == "img" {
			t.Errorf("the page has a <%s> element", n.Data)
		}
		if n.Data == "link" {
			t.Errorf("the page links a resource: %v", n.Attr)
		}
		for _, a := range n.Attr {
			switch key := strings.ToLower(a.Key); {
			case key == "src" || key == "href" || key == "xlink:href" || key == "action" || key == "srcset":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> is not a link within the page", n.Data, a.Key, a.Val)
				}
			case strings.HasPrefix(key, "on"):
				t.Errorf("<%s> has an event handler %s", n.Data, a.Key)
			case key == "style" && strings.Contains(strings.ToLower(a.Val), "url("):
				t.Errorf("<%s style=%q> loads a URL", n.Data, a.Val)
			}
		}
		if n.Data == "style" {
			css := textOf(n)
			if strings.Contains(strings.ToLower(css), "url(") || strings.Contains(css, "@import") {
				t.Errorf("the style sheet loads something: %s", css)
			}
		}
	})
}

func TestHTMLShowsAgentTextEscaped(t *testing.T) {
	out, doc := renderHTML(t, fixture())
	if strings.Contains(out, "<script>") || strings.Contains(out, "\x1b") {
		t.Fatal("agent text reached the page unescaped")
	}
	text := textOf(doc)
	if !strings.Contains(text, `<script>alert(1)</script>\x1b[2J`) {
		t.Errorf("the page does not show the agent's text as text")
	}
	// The only URL on the page is the agent's, shown as text.
	for _, m := range externalURL.FindAllStringIndex(out, -1) {
		if !strings.HasPrefix(out[m[0]:], "https://evil.example/") {
			t.Errorf("the page holds a URL: %q", out[m[0]:min(m[1]+20, len(out))])
		}
	}
}

func TestChartsAreWellFormedSVG(t *testing.T) {
	for name, in := range map[string]Input{"full": fixture(), "empty": func() Input {
		in := fixture()
		in.Turns, in.Commits = nil, nil
		return in
	}()} {
		out, _ := renderHTML(t, in)
		svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(out, -1)
		if len(svgs) != 3 && name == "full" || len(svgs) != 0 && name == "empty" {
			t.Fatalf("%s: %d charts, want burn-up, tokens and cost (none without turns)", name, len(svgs))
		}
		for _, svg := range svgs {
			dec := xml.NewDecoder(strings.NewReader(svg))
			elements := map[string]int{}
			for {
				tok, err := dec.Token()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: the chart is not well-formed XML: %v\n%s", name, err, svg)
				}
				if se, ok := tok.(xml.StartElement); ok {
					elements[se.Name.Local]++
				}
			}
			if name == "full" && elements["polyline"] == 0 && elements["rect"] == 0 {
				t.Errorf("a chart draws nothing: %v", elements)
			}
		}
		if name == "full" && !strings.Contains(svgs[0], "<polyline") {
			t.Errorf("the first chart is not the burn-up line")
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, Build(fixture())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"`parse-args`", "`write-out`", "`docs`", "`3333333`", "is budget_limited", "failed verification", "$0.75", "| 4 |", "<br>**refused:** example.org ×3, &lt;b&gt;x&lt;/b&gt; ×1"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script>") || strings.Contains(out, "\x1b") || strings.Contains(out, " [x](") {
		t.Errorf("agent text reached the Markdown unescaped:\n%s", out)
	}
	if !strings.Contains(out, `&lt;script&gt;`) || !strings.Contains(out, `\|`) || !strings.Contains(out, `\x1b`) {
		t.Errorf("agent text is not shown escaped:\n%s", out)
	}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "|") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != strings.Count(strings.Split(out, "\n")[firstTableLine(out, l)], "|") {
			t.Errorf("line %d breaks its table: %s", i+1, l)
		}
	}
}

// firstTableLine is the header line of the table l belongs to.
func firstTableLine(out, l string) int {
	lines := strings.Split(out, "\n")
	at := 0
	for i, x := range lines {
		if x == l {
			at = i
			break
		}
	}
	for at > 0 && strings.HasPrefix(lines[at-1], "|") {
		at--
	}
	return at
}

// A turn that failed from infrastructure (a model it could not reach, a
// crash) or ran out of time is not a catch of the referee's: it is
// counted apart, in the JSON, the Markdown and the page.
func TestFailedTurnsAreNotCatches(t *testing.T) {
	in := fixture()
	unreachable := harness.Finding{Kind: harness.FindingAgentError, Text: "the agent failed: model request 1: connection refused"}
	for i := range in.Turns[:3] {
		in.Turns[i].Findings = append(in.Turns[i].Findings, unreachable)
	}
	in.Turns[1].Findings = append(in.Turns[1].Findings, harness.Finding{Kind: harness.FindingTimeout, Text: "the turn timed out"})
	r := Build(in)
	if len(r.Caught) != 1 || r.Caught[0].Kind != "verification_failed" {
		t.Errorf("caught = %+v, want the failed verification only", r.Caught)
	}
	want := []Count{{Kind: "timeout", Count: 1}, {Kind: "agent_error", Count: 3}}
	if !slices.Equal(r.Failed, want) {
		t.Errorf("failed = %+v, want %+v", r.Failed, want)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.ReportOutput, "report", data); err != nil {
		t.Fatal(err)
	}
	var mdb, pageb bytes.Buffer
	if err := Markdown(&mdb, r); err != nil {
		t.Fatal(err)
	}
	md := mdb.String()
	if !strings.Contains(md, "The referee caught: 1 × failed verification.") || !strings.Contains(md, "Turns that failed without a catch: 1 × turn timed out, 3 × agent failed.") {
		t.Errorf("Markdown does not count the failed turns apart:\n%s", md)
	}
	if err := HTML(&pageb, r); err != nil {
		t.Fatal(err)
	}
	page := pageb.String()
	if !strings.Contains(page, "Turns that failed without a catch: 1 × turn timed out, 3 × agent failed.") || !strings.Contains(page, "The referee caught: 1 × failed verification.") {
		t.Errorf("the page does not count the failed turns apart")
	}
}

// A turn that ran the completion audit shows it: the report's JSON holds
// every check with its feature and time and sums them up, and the page
// and the Markdown say how many passed, listing a failed one by feature
// (each passing one is not a line of its own: an audit checks thousands).
func TestReportShowsTheCompletionAudit(t *testing.T) {
	in := fixture()
	last := &in.Turns[len(in.Turns)-1]
	last.Checks = append(last.Checks,
		harness.LedgerCheck{Name: harness.CheckAudit, Feature: "parse-args", Result: harness.CheckPassed, DurationSeconds: 0.5},
		harness.LedgerCheck{Name: harness.CheckAudit, Feature: "docs", Command: "test -f README", Result: harness.CheckFailed, ExitCode: 1, DurationSeconds: 0.25})
	r := Build(in)
	if a := r.Turns[3].Audit; a == nil || *a != (Audit{Checks: 2, Passed: 1, Seconds: 0.75}) {
		t.Fatalf("turn 4's audit = %+v, want 1 of 2 passed in 0.75 s", a)
	}
	if c := r.Turns[3].Checks; len(c) != 3 || c[1].Feature != "parse-args" || c[1].DurationSeconds != 0.5 {
		t.Errorf("turn 4's checks = %+v, want each audit check with its feature and time", c)
	}
	data, _ := json.Marshal(r)
	if err := schemas.Validate(schemas.ReportOutput, "report", data); err != nil {
		t.Fatal(err)
	}
	page, _ := renderHTML(t, in)
	if !strings.Contains(page, "completion audit <span class=\"fail\">1 of 2 passed</span>") || !strings.Contains(page, "audit <code>docs</code>") {
		t.Errorf("the page does not show the audit")
	}
	if strings.Contains(page, "audit <code>parse-args</code>") {
		t.Errorf("the page lists a passing audit check on its own")
	}
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "audit `docs` failed (exit 1), completion audit 1 of 2 passed") {
		t.Errorf("the Markdown does not show the audit:\n%s", md.String())
	}
}
