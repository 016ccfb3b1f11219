package harness

import (
	"testing"
	"time"
)

func TestEditEntry(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	old := DefaultLimits()
	more, none := 40, int64(0)
	changes := LimitChanges{MaxIterations: &more, TokenBudget: &none}
	raised := old
	changes.Apply(&raised)
	tests := []struct {
		name string
		edit Edit
		want string
	}{
		{"goal", Edit{At: at, Goal: &GoalChange{Old: "add login", New: "add OAuth login\nGitHub only\n\n  first\n"}, OldLimits: old, NewLimits: old},
			"\n## Edited by the user\n\n- At: 2026-03-01T11:00:00Z\n- Old goal: add login\n- New goal: add OAuth login\n  GitHub only\n\n    first\n"},
		{"limits", Edit{At: at, OldLimits: old, NewLimits: raised},
			"\n## Edited by the user\n\n- At: 2026-03-01T11:00:00Z\n- Limit: max iterations 25 → 40\n"},
		{"limits already so", Edit{At: at, OldLimits: raised, NewLimits: raised},
			"\n## Edited by the user\n\n- At: 2026-03-01T11:00:00Z\n- Nothing changed: the limits were already as asked\n"},
	}
	for _, tt := range tests {
		if got := EditEntry(tt.edit); got != tt.want {
			t.Errorf("%s: EditEntry =\n%q\nwant\n%q", tt.name, got, tt.want)
		}
	}
}

func TestLimitChangeLines(t *testing.T) {
	t.Parallel()
	old := Limits{MaxIterations: 25, TokenBudget: 2000000, TimeBudgetSeconds: 10800, TurnTimeoutSeconds: 1800}
	new := old
	new.TokenBudget, new.TimeBudgetSeconds, new.TurnTimeoutSeconds = 0, 2700, 45*60+30
	want := []string{"token budget 2,000,000 → none", "time budget 3h → 45m", "turn timeout 30m → 45m30s"}
	got := LimitChangeLines(old, new)
	if len(got) != len(want) {
		t.Fatalf("LimitChangeLines = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
	if got := LimitChangeLines(old, old); got != nil {
		t.Errorf("no change: %q", got)
	}
}

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		secs int64
		want string
	}{
		{-3, "0s"}, {0, "0s"}, {45, "45s"}, {60, "1m"}, {750, "12m30s"}, {3600, "1h"},
		{4320, "1h12m"}, {4350, "1h12m"}, {10800, "3h"}, {100 * 3600, "100h"},
	}
	for _, tt := range tests {
		if got := FormatSeconds(tt.secs); got != tt.want {
			t.Errorf("FormatSeconds(%d) = %q, want %q", tt.secs, got, tt.want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-1234, "-1,234"}, {100000, "100,000"},
	}
	for _, tt := range tests {
		if got := FormatCount(tt.n); got != tt.want {
			t.Errorf("FormatCount(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
