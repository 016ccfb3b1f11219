package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUsageAddCost(t *testing.T) {
	var u Usage
	if b, _ := json.Marshal(u); strings.Contains(string(b), "costUSD") {
		t.Fatalf("no cost reported yet, but the JSON has one: %s", b)
	}
	for _, c := range []float64{0.1, 0.2, 0.0421, 0} {
		u.AddCost(c)
	}
	if u.CostUSD == nil || *u.CostUSD != 0.3421 {
		t.Fatalf("cost = %v, want exactly 0.3421", u.CostUSD)
	}
	if b, _ := json.Marshal(u); !strings.Contains(string(b), `"costUSD":0.3421`) {
		t.Fatalf("JSON = %s", b)
	}
}

func TestSameAgent(t *testing.T) {
	a := Agent{Kind: AgentCodex, Args: []string{"-c", "model_provider=local"}}
	b := a
	b.Args = []string{"-c", "model_provider=local"}
	if !SameAgent(a, b) {
		t.Error("equal settings differ")
	}
	b.Args = []string{"-c"}
	if SameAgent(a, b) {
		t.Error("different args are the same")
	}
	b.Args, b.StallTimeoutSeconds = a.Args, 60
	if SameAgent(a, b) {
		t.Error("different stall timeouts are the same")
	}
}

func TestLimitChangesCostBudget(t *testing.T) {
	usd := 3.5
	c := LimitChanges{CostBudgetUSD: &usd}
	if c.Empty() {
		t.Fatal("a cost budget change is not empty")
	}
	l := DefaultLimits()
	c.Apply(&l)
	if l.CostBudgetUSD != 3.5 {
		t.Fatalf("cost budget = %v", l.CostBudgetUSD)
	}
	lines := LimitChangeLines(DefaultLimits(), l)
	if len(lines) != 1 || lines[0] != "cost budget none → $3.50" {
		t.Fatalf("lines = %q", lines)
	}
}
