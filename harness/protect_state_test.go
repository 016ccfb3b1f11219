package harness

import (
	"slices"
	"testing"
)

// The --protect globs go through an edit of a running task (a limits
// request in control.json, schema-checked) and a save of state, and an
// empty list clears them.
func TestProtectThroughControlAndState(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	globs := []string{"**/*_test.go", "spec/**"}
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlLimits, Limits: &LimitChanges{Protect: &globs}}); err != nil {
		t.Fatal(err)
	}
	took, err := s.TakeControl(st.ID)
	if err != nil || len(took) != 1 || took[0].Limits.Protect == nil {
		t.Fatalf("TakeControl = %+v, %v", took, err)
	}
	took[0].Limits.Apply(&st.Limits)
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
	back, err := s.LoadState(st.ID)
	if err != nil || !slices.Equal(back.Limits.Protect, globs) || !SameLimits(back.Limits, st.Limits) {
		t.Fatalf("loaded %q, %v", back.Limits.Protect, err)
	}
	none := []string{}
	LimitChanges{Protect: &none}.Apply(&back.Limits)
	if back.Limits.Protect != nil || SameLimits(back.Limits, st.Limits) {
		t.Errorf("an empty list left %q", back.Limits.Protect)
	}
	if lines := LimitChangeLines(st.Limits, back.Limits); len(lines) != 1 || lines[0] != "protected files **/*_test.go spec/** → none" {
		t.Errorf("LimitChangeLines = %q", lines)
	}
}
