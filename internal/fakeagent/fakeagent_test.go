package fakeagent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/featurelist"
)

// turn is a turn on a fresh workspace with a harness folder.
func turn(t *testing.T, phase string, iteration int) agent.Turn {
	t.Helper()
	ws := t.TempDir()
	dir := filepath.Join(ws, ".grub", "0a1b2c3d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"goal":"make marker files"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := agent.Turn{TaskID: "0a1b2c3d", Iteration: 1, Phase: "initializer", Prompt: "do the work",
		Workspace: ws, HarnessDir: dir, Timeout: time.Minute}
	if phase == "execution" {
		if _, err := newAgent(t, "-features", "2").RunTurn(context.Background(), tr); err != nil {
			t.Fatal(err)
		}
	}
	tr.Phase, tr.Iteration = phase, iteration
	return tr
}

func newAgent(t *testing.T, args ...string) *Agent {
	t.Helper()
	a, err := New(args...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParseArgs(t *testing.T) {
	s, err := ParseArgs([]string{"-features", "4", "-plan", "2:hang,3:two-flips", "-default", "idle", "-usage", "1000,200,100", "-sleep", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Features != 4 || s.behaviour(2) != "hang" || s.behaviour(3) != "two-flips" || s.behaviour(4) != "idle" || s.Sleep != 2*time.Second {
		t.Errorf("%+v", s)
	}
	if u := s.Usage; u.InputTokens != 1000 || u.CachedInputTokens != 200 || u.OutputTokens != 100 {
		t.Errorf("usage %+v", u)
	}
	if _, err := ParseArgs([]string{"-nope"}); err == nil {
		t.Error("an unknown flag was accepted")
	}
}

// In-process, the initializer plans on the turn's paths and the final
// message goes to the result, not to stdout.
func TestAgentPlansAndWorks(t *testing.T) {
	a := newAgent(t, "-features", "2", "-usage", "10,2,5")
	tr := turn(t, "initializer", 1)
	res, err := a.RunTurn(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.FinalMessage, `"status":"continue"`) || res.Usage.Tokens() != 13 || res.Usage.Requests != 1 {
		t.Errorf("result %+v", res)
	}
	data, err := os.ReadFile(filepath.Join(tr.HarnessDir, "feature-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := featurelist.Parse("feature-list.json", data)
	if err != nil || len(l.Features) != 2 || l.Goal != "make marker files" {
		t.Fatalf("plan %+v %v", l, err)
	}
	tr.Phase, tr.Iteration = "execution", 2
	res, err = a.RunTurn(context.Background(), tr)
	if err != nil || !strings.Contains(res.FinalMessage, "implemented feature-1") {
		t.Fatalf("%q %v", res.FinalMessage, err)
	}
	if _, err := os.Stat(filepath.Join(tr.Workspace, "feature-1.done")); err != nil {
		t.Error(err)
	}
}

func TestAgentFailIsAnExitError(t *testing.T) {
	a := newAgent(t, "-default", "fail")
	tr := turn(t, "execution", 2)
	_, err := a.RunTurn(context.Background(), tr)
	if err == nil || !strings.Contains(err.Error(), "exited with code 3") || !strings.Contains(err.Error(), "crashed on purpose") {
		t.Fatalf("err = %v", err)
	}
}

// hang waits until the turn is cancelled or its timeout passes, and ends
// the way a real backend does.
func TestAgentHangEnds(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		a := newAgent(t, "-default", "hang")
		ctx, cancel := context.WithCancel(context.Background())
		a.OnWait = func(agent.Turn) { cancel() }
		_, err := a.RunTurn(ctx, turn(t, "execution", 2))
		if !errors.Is(err, context.Canceled) || errors.Is(err, agent.ErrTimeout) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		a := newAgent(t, "-default", "hang")
		fire := make(chan time.Time, 1)
		var asked []time.Duration
		a.After = func(d time.Duration) <-chan time.Time {
			asked = append(asked, d)
			return fire
		}
		a.OnWait = func(agent.Turn) { fire <- time.Time{} }
		_, err := a.RunTurn(context.Background(), turn(t, "execution", 2))
		if !errors.Is(err, agent.ErrTimeout) {
			t.Fatalf("err = %v, want agent.ErrTimeout", err)
		}
		if len(asked) != 1 || asked[0] != time.Minute {
			t.Errorf("timers %v, want the turn's timeout only", asked)
		}
	})
	t.Run("slow sleeps on the clock", func(t *testing.T) {
		a := newAgent(t, "-default", "slow", "-sleep", "5s")
		done := make(chan time.Time, 1)
		a.After = func(d time.Duration) <-chan time.Time {
			if d == 5*time.Second {
				return done
			}
			return nil // the turn's timeout never passes
		}
		a.OnWait = func(agent.Turn) { done <- time.Time{} }
		res, err := a.RunTurn(context.Background(), turn(t, "execution", 2))
		if err != nil || !strings.Contains(res.FinalMessage, "implemented feature-1") {
			t.Fatalf("%q %v", res.FinalMessage, err)
		}
	})
}
