package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

// verdictInput is a task whose turns ended every way grub decides: an
// accepted flip, an illegal edit rolled back, a failed verification, a
// model that could not be reached, a cancelled turn and a crash.
func verdictInput() Input {
	in := fixture()
	t0 := in.State.CreatedAt
	in.State.Status, in.State.StopReason = harness.StatusFailed, "iteration budget spent (6 of 6 turns); raise it with grub resume --max-iter N"
	in.State.CurrentIteration, in.State.Limits.MaxIterations = 6, 6
	in.Commits = nil
	line := func(n int, dec loopstate.Status, summary string, findings ...harness.Finding) harness.TurnRecord {
		return harness.TurnRecord{Version: 1, Iteration: n, Phase: harness.PhaseExecution, Feature: "write-out", Decision: dec,
			Summary: summary, Findings: findings, Checks: []harness.LedgerCheck{}, DurationSeconds: 30,
			Usage:   harness.TurnUsage{InputTokens: 1_234_567, OutputTokens: 1000, Requests: 3},
			Passing: 1, Total: 3, Status: harness.StatusRunning, Time: t0.Add(time.Duration(n) * time.Minute)}
	}
	unreachable := harness.Finding{Kind: harness.FindingAgentError, Text: "the agent failed: connection refused"}
	in.Turns = []harness.TurnRecord{
		line(1, loopstate.Continue, "AGENT-1 made write-out pass"),
		line(2, loopstate.Continue, "AGENT-2 all tests pass", harness.Finding{Kind: harness.FindingIllegalEdit, Text: "GRUB-2 illegal edit, restored"}),
		line(3, loopstate.Continue, "AGENT-3 write-out passes", harness.Finding{Kind: harness.FindingVerification, Text: "GRUB-3 verify failed; the claim was reverted"}),
		line(4, loopstate.Failed, "the agent did not finish the turn", unreachable),
		line(5, loopstate.Cancelled, "the turn was cancelled before it finished"),
		line(6, loopstate.Unknown, "the runner stopped during this turn"),
	}
	in.Turns[0].Flipped = "write-out"
	in.Turns[5].Status = harness.StatusFailed
	return in
}

// TestVerdictInEveryView checks that every view shows grub's outcome of
// each turn (never the agent's "continue" or the task's "running" for a
// turn grub rolled back), grub's finding before the agent's claim, and
// the infrastructure failure apart from the referee's catches.
func TestVerdictInEveryView(t *testing.T) {
	r := Build(verdictInput())
	want := []harness.Outcome{harness.OutcomeAccepted, harness.OutcomeRejected, harness.OutcomeFailed,
		harness.OutcomeFailed, harness.OutcomeCancelled, harness.OutcomeUnknown}
	for i, tu := range r.Turns {
		if tu.Outcome != want[i] {
			t.Errorf("turn %d: outcome %s, want %s", tu.Iteration, tu.Outcome, want[i])
		}
	}
	if got := r.OutcomesText(); got != "1 accepted, 1 rejected, 2 failed, 1 cancelled, 1 unknown" {
		t.Errorf("outcomes = %q", got)
	}
	if len(r.Failed) != 1 || r.Failed[0].Kind != "agent_error" {
		t.Errorf("failed = %+v, want the unreachable model only", r.Failed)
	}
	for _, c := range r.Caught {
		if c.Kind == "agent_error" {
			t.Errorf("an unreachable model is counted among the referee's catches: %+v", r.Caught)
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemas.Validate(schemas.ReportOutput, "report", data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"outcome":"rejected"`) {
		t.Errorf("the JSON has no outcome per turn")
	}

	page, doc := renderHTML(t, verdictInput())
	rows := map[string]string{}
	walk(doc, func(n *html.Node) {
		if n.Data == "tr" && strings.HasPrefix(attr(n, "id"), "turn-") {
			rows[attr(n, "id")] = textOf(n)
		}
	})
	for i, o := range want {
		row := rows["turn-"+string(rune('1'+i))]
		if !strings.Contains(row, o.Text()) {
			t.Errorf("turn %d's row does not say %q: %s", i+1, o.Text(), row)
		}
		if strings.Contains(row, "running") {
			t.Errorf("turn %d's row shows the task's status running: %s", i+1, row)
		}
	}
	for _, n := range []string{"2", "3"} {
		row := rows["turn-"+n]
		g, a := strings.Index(row, "GRUB-"+n), strings.Index(row, "AGENT-"+n)
		if g < 0 || a < 0 || g > a || !strings.Contains(row, "agent's claim (continue):") {
			t.Errorf("turn %s: grub's finding does not come before the agent's claim: %s", n, row)
		}
	}
	if !strings.Contains(page, "Turns that failed without a catch: 1 × agent failed.") {
		t.Errorf("the page does not count the unreachable model apart")
	}

	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "| 2 |") {
			if !strings.Contains(l, "**rejected**") || strings.Index(l, "GRUB-2") > strings.Index(l, "AGENT-2") || !strings.Contains(l, "*agent's claim (continue):*") {
				t.Errorf("Markdown turn 2 lacks the outcome, or puts the agent's claim first: %s", l)
			}
		}
	}
	if !strings.Contains(md.String(), "Turns by grub's verdict: 1 accepted, 1 rejected, 2 failed, 1 cancelled, 1 unknown.") {
		t.Errorf("Markdown does not count the turns by outcome:\n%s", md.String())
	}
}

// TestNumbersCostAndNext checks the human views: counts with thousands
// separators (the JSON keeps plain numbers), a cost row that says "not
// reported" when the backend gave none, and what to do next.
func TestNumbersCostAndNext(t *testing.T) {
	in := verdictInput()
	in.State.Usage = harness.Usage{TokensUsed: 7_412_345, Requests: 18}
	in.State.Limits.CostBudgetUSD = 0
	r := Build(in)
	page, doc := renderHTML(t, in)
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"page": textOf(doc), "Markdown": md.String()} {
		for _, want := range []string{"7,412,345", "1,235,567", "not reported", "grub resume 0a1b2c3d --max-iter 12", "grub report 0a1b2c3d"} {
			if !strings.Contains(out, want) {
				t.Errorf("the %s lacks %q", name, want)
			}
		}
	}
	if !regexp.MustCompile(`<tr id="cost-row"><td>cost</td><td class="num">not reported</td>`).MatchString(page) {
		t.Errorf("the page has no cost row saying not reported")
	}
	data, _ := json.Marshal(r)
	if !strings.Contains(string(data), `"used":7412345`) || strings.Contains(string(data), "7,412,345") {
		t.Errorf("the JSON's numbers are not plain: %s", data)
	}
	if !strings.Contains(string(data), `"next":[{"command":"grub resume 0a1b2c3d --max-iter 12"`) {
		t.Errorf("the JSON has no next steps: %s", data)
	}
	in.State.Usage.CostUSD = func(f float64) *float64 { return &f }(0.75)
	page, _ = renderHTML(t, in)
	if !strings.Contains(page, `<tr id="cost-row"><td>cost</td><td class="num">$0.75</td>`) {
		t.Errorf("the page's cost row does not show the reported cost")
	}
	in.State.Status = harness.StatusRunning
	if page, _ = renderHTML(t, in); strings.Contains(page, `id="next"`) {
		t.Errorf("a running task gets a what-next line")
	}
}

// TestEmptyChartsLeftOut checks that a chart with nothing to draw (no
// feature passing after any turn, no tokens counted, no cost) is left out
// instead of drawn empty.
func TestEmptyChartsLeftOut(t *testing.T) {
	in := verdictInput()
	for i := range in.Turns {
		in.Turns[i].Passing = 0
		in.Turns[i].Usage = harness.TurnUsage{}
	}
	in.Turns[0].Flipped = ""
	page, _ := renderHTML(t, in)
	if strings.Contains(page, "<svg") || strings.Contains(page, "<h2>Progress</h2>") {
		t.Errorf("the page draws empty charts")
	}
	in.Turns[2].Usage.OutputTokens = 10
	page, _ = renderHTML(t, in)
	if n := strings.Count(page, "<svg"); n != 1 || !strings.Contains(page, `id="tokens"`) {
		t.Errorf("%d charts, want the tokens chart only", n)
	}
}
