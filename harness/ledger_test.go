package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
)

func sampleTurn(n int) TurnRecord {
	cost := 0.25
	return TurnRecord{
		Iteration: n, Phase: PhaseExecution, Feature: "f-1", Flipped: "f-1",
		Decision: loopstate.Continue, Summary: "did <b>it</b>\x1b[31m",
		Findings:        []Finding{{Kind: FindingVerification, Text: "verify failed"}},
		Checks:          []LedgerCheck{NewLedgerCheck("init.sh", Check{Command: "bash init.sh", Passed: true})},
		DurationSeconds: 12.5,
		Usage:           TurnUsage{InputTokens: 100, CachedInputTokens: 40, OutputTokens: 20, Requests: 3, CostUSD: &cost},
		Passing:         1, Total: 3, Status: StatusRunning,
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func TestAppendAndLoadTurns(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	if got, err := s.LoadTurns(st.ID); err != nil || got != nil {
		t.Fatalf("LoadTurns without a ledger = %v, %v; want nil, nil", got, err)
	}
	for _, n := range []int{1, 2, 2} {
		if err := s.AppendTurn(st.ID, sampleTurn(n)); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.LoadTurns(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].Summary != "did <b>it</b>\x1b[31m" || *rs[1].Usage.CostUSD != 0.25 || rs[0].Version != LedgerVersion {
		t.Fatalf("LoadTurns = %+v", rs)
	}
	if got := LatestTurns(rs); len(got) != 2 || got[1].Iteration != 2 {
		t.Fatalf("LatestTurns = %+v", got)
	}
}

func TestAppendTurnRejectsInvalidLine(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	bad := sampleTurn(1)
	bad.Findings = []Finding{{Kind: "made_up", Text: "x"}}
	var se *schemas.Error
	if err := s.AppendTurn(st.ID, bad); !errors.As(err, &se) {
		t.Fatalf("AppendTurn(bad kind) = %v, want a *schemas.Error", err)
	}
	if _, err := os.Stat(s.Path(st.ID, FileTurnLedger)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an invalid line was written: %v", err)
	}
}

func TestLoadTurnsNamesBadLineAndSkipsTornTail(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	if err := s.AppendTurn(st.ID, sampleTurn(1)); err != nil {
		t.Fatal(err)
	}
	path := s.Path(st.ID, FileTurnLedger)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"version":1,"iteration":2,"pha`) // a crash cut the append
	f.Close()
	rs, err := s.LoadTurns(st.ID)
	if err != nil || len(rs) != 1 {
		t.Fatalf("LoadTurns with a torn tail = %d lines, %v", len(rs), err)
	}
	// The next append ends the torn line first; the torn line is then a
	// bad line in the middle, named with its number.
	if err := s.AppendTurn(st.ID, sampleTurn(2)); err != nil {
		t.Fatal(err)
	}
	_, err = s.LoadTurns(st.ID)
	var se *schemas.Error
	if !errors.As(err, &se) || !strings.HasSuffix(se.File, FileTurnLedger+":2") {
		t.Fatalf("LoadTurns = %v, want a *schemas.Error naming line 2", err)
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], `{"version":1,"iteration":2,"phase"`) {
		t.Fatalf("ledger after a torn line:\n%s", data)
	}
}

func TestAppendTurnRefusesLink(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.Path(st.ID, FileTurnLedger)); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := s.AppendTurn(st.ID, sampleTurn(1)); err == nil {
		t.Fatal("AppendTurn wrote through a symbolic link")
	}
	if data, _ := os.ReadFile(target); len(data) != 0 {
		t.Fatalf("the link's target was written: %q", data)
	}
	var nr *NotRegularError
	if _, err := s.LoadTurns(st.ID); !errors.As(err, &nr) {
		t.Fatalf("LoadTurns through a link = %v, want *NotRegularError", err)
	}
}

func TestTurnLedgerIsTracked(t *testing.T) {
	found := false
	for _, n := range TrackedFiles() {
		found = found || n == FileTurnLedger
	}
	if !found || !strings.Contains(Gitignore, "!*/"+FileTurnLedger+"\n") {
		t.Fatalf("%s is not tracked: %v\n%s", FileTurnLedger, TrackedFiles(), Gitignore)
	}
}

// TestLoadTurnsReadsKeysExactly: a ledger line whose key differs from
// grub's only in case ("Passing" beside "passing", "SUMMARY") is refused,
// not read into the field encoding/json would match it to.
func TestLoadTurnsReadsKeysExactly(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	if err := s.AppendTurn(st.ID, sampleTurn(1)); err != nil {
		t.Fatal(err)
	}
	path := s.Path(st.ID, FileTurnLedger)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `"summary":`, `"SUMMARY":"a clean run","summary":`, 1)
	if forged == string(data) {
		t.Fatal("the sample line has no summary key")
	}
	if err := os.WriteFile(path, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	var se *schemas.Error
	if _, err := s.LoadTurns(st.ID); !errors.As(err, &se) {
		t.Fatalf("LoadTurns of a case-variant key = %v, want a *schemas.Error", err)
	}
}
