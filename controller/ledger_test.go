package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

func (r *run) ledger() []harness.TurnRecord {
	r.t.Helper()
	rs, err := r.store.LoadTurns(r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	return rs
}

func TestLedgerHasOneLinePerTurn(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	if _, err := r.run(context.Background(), "-features 3", harness.LimitChanges{}); err != nil {
		t.Fatal(err)
	}
	rs := r.ledger()
	if len(rs) != 4 {
		t.Fatalf("%d ledger lines, want 4: %+v", len(rs), rs)
	}
	for i, l := range rs {
		if l.Iteration != i+1 || l.Total != 3 || l.Passing != i || l.Decision == "" || l.Time.IsZero() || l.Usage.Requests == 0 {
			t.Errorf("line %d: %+v", i+1, l)
		}
		if len(l.Findings) != 0 {
			t.Errorf("line %d: an honest turn has findings %+v", i+1, l.Findings)
		}
		if len(l.Checks) == 0 || l.Checks[0].Name != "init.sh" || l.Checks[0].Result != harness.CheckPassed {
			t.Errorf("line %d: checks %+v, want init.sh passed first", i+1, l.Checks)
		}
	}
	if rs[0].Phase != harness.PhaseInitializer || rs[1].Phase != harness.PhaseExecution || rs[1].Flipped != "feature-1" {
		t.Errorf("first lines: %+v, %+v", rs[0], rs[1])
	}
	if last := rs[3]; last.Status != harness.StatusComplete || last.Feature != "feature-3" {
		t.Errorf("last line %+v, want status complete after feature-3", last)
	}
	if rs[1].Status != harness.StatusRunning {
		t.Errorf("status after turn 2 = %s, want running", rs[1].Status)
	}
}

func TestLedgerNamesWhatTheRefereeCaught(t *testing.T) {
	t.Parallel()
	cases := []struct {
		behaviour string
		kind      harness.FindingKind
	}{
		{"edit-description", harness.FindingIllegalEdit},
		{"verify-fail", harness.FindingVerification},
		{"no-loop-state", harness.FindingNoDecision},
		{"write-state", harness.FindingTampering},
		{"fail", harness.FindingAgentError},
		{"list-dir", harness.FindingIllegalEdit},
		{"complete-early", harness.FindingCompletionRejected},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			if _, err := r.run(context.Background(), "-features 2 -plan 2:"+c.behaviour, harness.LimitChanges{}); err != nil {
				t.Fatal(err)
			}
			rs := r.ledger()
			if len(rs) < 2 {
				t.Fatalf("%d ledger lines", len(rs))
			}
			l := rs[1]
			found := false
			for _, f := range l.Findings {
				found = found || (f.Kind == c.kind && f.Text != "")
			}
			if !found {
				t.Fatalf("turn 2's findings %+v lack %s", l.Findings, c.kind)
			}
			if c.kind != harness.FindingCompletionRejected && l.Decision == loopstate.Complete {
				t.Errorf("decision %s", l.Decision)
			}
			if c.behaviour == "verify-fail" {
				if n := len(l.Checks); n != 2 || l.Checks[1].Name != "verify" || l.Checks[1].Result != harness.CheckFailed {
					t.Errorf("checks %+v, want init.sh then a failed verify", l.Checks)
				}
			}
		})
	}
}

// TestLedgerRecordsRefusedHosts: what the network proxy refused during a
// turn is in that turn's ledger line and progress-log entry, and taken
// once a turn.
func TestLedgerRecordsRefusedHosts(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	calls := 0
	refused := func() []harness.RefusedHost {
		calls++
		if calls == 2 {
			return []harness.RefusedHost{{Host: "evil.example", Count: 1}, {Host: "example.org", Count: 3}}
		}
		return nil
	}
	_, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: r.agent("-features 2"), Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: &r.commits, Refused: refused})
	if err != nil {
		t.Fatal(err)
	}
	rs := r.ledger()
	if len(rs) != 3 || calls != 3 {
		t.Fatalf("%d lines, %d calls, want 3 and 3", len(rs), calls)
	}
	if len(rs[0].Refused) != 0 || len(rs[2].Refused) != 0 || fmt.Sprint(rs[1].Refused) != "[{evil.example 1} {example.org 3}]" {
		t.Fatalf("refused: %v / %v / %v", rs[0].Refused, rs[1].Refused, rs[2].Refused)
	}
	if !strings.Contains(r.stderr.String(), "tokens used; network refused: evil.example ×1, example.org ×3\n") {
		t.Errorf("progress lines:\n%s", r.stderr.String())
	}
	if log := r.log(); strings.Count(log, "- Network refused:") != 1 || !strings.Contains(log, "- Network refused: evil.example ×1, example.org ×3\n") {
		t.Fatalf("progress log:\n%s", log)
	}
}
