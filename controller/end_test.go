package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

func TestTurnEnd(t *testing.T) {
	decided := func(status loopstate.Status, question string) *outcome {
		return &outcome{decision: harness.Decision{Decision: loopstate.Decision{Status: status, Summary: "s", Question: question}}}
	}
	cases := []struct {
		name        string
		state       func(st *harness.State)
		out         *outcome
		interrupted bool
		want        harness.Status // "" = the loop goes on
		reason      string
	}{
		{"continue", nil, decided(loopstate.Continue, ""), false, "", ""},
		{"complete", nil, &outcome{complete: true}, false, harness.StatusComplete, reasonComplete},
		{"interrupted", nil, &outcome{cancelled: true}, true, harness.StatusPaused, interruptedReason},
		{"interrupted wins over complete", nil, &outcome{complete: true}, true, harness.StatusPaused, interruptedReason},
		{"quota", nil, &outcome{quota: "429 insufficient_quota"}, false, harness.StatusUsageLimited, "the model provider refused for quota: 429 insufficient_quota"},
		{"quota wins over the rules", func(st *harness.State) { st.CurrentIteration = 25 }, &outcome{quota: "q"}, false, harness.StatusUsageLimited, "quota"},
		{"question", nil, decided(loopstate.Blocked, "Postgres or SQLite?"), false, harness.StatusBlocked, "the agent asks: Postgres or SQLite?"},
		{"question wins over complete", nil, func() *outcome { o := decided(loopstate.Blocked, "which?"); o.complete = true; return o }(), false, harness.StatusBlocked, "the agent asks: which?"},
		{"question of a failed turn does not stop", nil, func() *outcome { o := decided(loopstate.Blocked, "which?"); o.fail("bad list"); return o }(), false, "", ""},
		{"blocked without a question goes on", func(st *harness.State) { st.ConsecutiveBlocked = 1 }, decided(loopstate.Blocked, ""), false, "", ""},
		{"pause --now goes on to the boundary", nil, &outcome{cancelled: true}, false, "", ""},
		{"failure limit", func(st *harness.State) { st.ConsecutiveFailures = 3; st.LastError = "bad loop-state" }, &outcome{failures: []string{"bad loop-state"}}, false, harness.StatusFailed, "3 consecutive failed execution turns"},
		{"blocked limit", func(st *harness.State) { st.ConsecutiveBlocked = 3 }, decided(loopstate.Blocked, ""), false, harness.StatusBlocked, "the agent reported blocked"},
		{"no progress", func(st *harness.State) { st.NoProgressTurns = NoProgressLimit }, decided(loopstate.Continue, ""), false, harness.StatusBlocked, "no progress in 5"},
		{"token budget", func(st *harness.State) { st.Limits.TokenBudget, st.Usage.TokensUsed = 100, 100 }, decided(loopstate.Continue, ""), false, harness.StatusBudgetLimited, "token budget spent"},
		{"time budget", func(st *harness.State) { st.Limits.TimeBudgetSeconds, st.Usage.TimeUsedSeconds = 6, 6 }, &outcome{cancelled: true}, false, harness.StatusBudgetLimited, "time budget spent (6s of 6s)"},
		{"iteration budget", func(st *harness.State) { st.CurrentIteration = 25 }, decided(loopstate.Continue, ""), false, harness.StatusFailed, "iteration budget spent"},
		{"complete wins over the iteration budget", func(st *harness.State) { st.CurrentIteration = 25 }, &outcome{complete: true}, false, harness.StatusComplete, "every feature passes"},
		{"slice ended", nil, &outcome{sliceEnded: "the time slice of this run ended (--for 1m)"}, false, harness.StatusPaused, "the time slice of this run ended (--for 1m)"},
		{"complete wins over the slice", nil, &outcome{complete: true, sliceEnded: "slice"}, false, harness.StatusComplete, "every feature passes"},
		{"a stop rule wins over the slice", func(st *harness.State) { st.CurrentIteration = 25 }, &outcome{sliceEnded: "slice"}, false, harness.StatusFailed, "iteration budget spent"},
		{"interrupted wins over the slice", nil, &outcome{cancelled: true, sliceEnded: "slice"}, true, harness.StatusPaused, interruptedReason},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := baseState()
			if c.state != nil {
				c.state(st)
			}
			got := turnEnd(st, c.out, c.interrupted)
			if c.want == "" {
				if got != nil {
					t.Fatalf("turnEnd = %+v, want the loop to go on", *got)
				}
				return
			}
			if got == nil || got.Status != c.want || !strings.Contains(got.Reason, c.reason) {
				t.Fatalf("turnEnd = %+v, want %s (%q)", got, c.want, c.reason)
			}
		})
	}
}

func TestClassifyAgentError(t *testing.T) {
	cases := []struct {
		name      string
		run       agentRun
		cancelled bool
		check     func(t *testing.T, o *outcome)
	}{
		{"success", agentRun{}, false, func(t *testing.T, o *outcome) {
			if o.cutShort() || len(o.failures) > 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"signal", agentRun{err: context.Canceled}, true, func(t *testing.T, o *outcome) {
			if !o.cancelled || len(o.failures) > 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"pause --now", agentRun{err: context.Canceled, pausedNow: true}, false, func(t *testing.T, o *outcome) {
			if !o.cancelled {
				t.Errorf("%+v", o)
			}
		}},
		{"quota", agentRun{err: fmt.Errorf("openai: %w", agent.ErrUsageLimited)}, false, func(t *testing.T, o *outcome) {
			if o.quota != "openai: provider usage limit reached" || o.cancelled {
				t.Errorf("%+v", o)
			}
		}},
		{"time budget", agentRun{err: agent.ErrTimeout, clip: clipBudget}, false, func(t *testing.T, o *outcome) {
			if !o.cancelled || o.decision.Status != loopstate.Cancelled || len(o.failures) > 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"turn timeout", agentRun{err: agent.ErrTimeout, timeout: time.Minute}, false, func(t *testing.T, o *outcome) {
			if len(o.failures) != 1 || !strings.Contains(o.failures[0], "timed out after 1m0s") {
				t.Errorf("%+v", o)
			}
		}},
		{"crash", agentRun{err: errors.New("exited with code 3")}, false, func(t *testing.T, o *outcome) {
			if len(o.failures) != 1 || o.failures[0] != "the agent failed: exited with code 3" {
				t.Errorf("%+v", o)
			}
		}},
		{"budget spent is no failure", agentRun{err: agent.ErrBudgetSpent}, false, func(t *testing.T, o *outcome) {
			if o.cutShort() || len(o.failures) > 0 {
				t.Errorf("%+v", o)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := &outcome{}
			classifyAgentError(o, c.run, c.cancelled)
			c.check(t, o)
		})
	}
}
