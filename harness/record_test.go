package harness

import (
	"os"
	"strings"
	"testing"
)

// TestAppendProgressOnce: a turn's entry is appended once, also when
// other text follows it in the log.
func TestAppendProgressOnce(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	entry := "\n## Turn 1: initializer\n\n- At: 2026-12-01T10:00:00Z\n- Decision: continue\n"
	for i, want := range []bool{true, false} {
		appended, err := s.AppendProgressOnce(st.ID, entry)
		if err != nil || appended != want {
			t.Fatalf("call %d: appended %v, %v; want %v", i, appended, err, want)
		}
	}
	if err := s.AppendProgress(st.ID, "- Warning: big.bin was left out of the commit"); err != nil {
		t.Fatal(err)
	}
	if appended, err := s.AppendProgressOnce(st.ID, entry); err != nil || appended {
		t.Fatalf("after a warning: appended %v, %v; want the entry found", appended, err)
	}
	data, _ := os.ReadFile(s.Path(st.ID, FileProgressLog))
	if n := strings.Count(string(data), "## Turn 1:"); n != 1 {
		t.Fatalf("%d entries of turn 1, want 1:\n%s", n, data)
	}
	if appended, err := s.AppendProgressOnce(st.ID, strings.Replace(entry, "10:00:00", "10:00:01", 1)); err != nil || !appended {
		t.Fatalf("another entry: appended %v, %v; want it appended", appended, err)
	}
}

// TestRecordPendingRoundTrip: a saved pending record reads back.
func TestRecordPendingRoundTrip(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	st.CurrentIteration = 1
	st.RecordPending = &PendingRecord{Iteration: 1, Entry: "\n## Turn 1: initializer\n", Feature: "f", Summary: "planned"}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RecordPending == nil || *got.RecordPending != *st.RecordPending {
		t.Fatalf("recordPending = %+v, want %+v", got.RecordPending, st.RecordPending)
	}
}
