package harness

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
)

// A task whose whole folder is gone (a reset took its tracked files and
// nothing untracked was left) is found by its private folder and comes
// back from the noted commit's state.json: awaiting the next turn when
// the git guard's copy was taken for it, as committed otherwise. A task
// that still has its state.json, or that nothing noted, is not lost.
func TestRecoverLostState(t *testing.T) {
	t.Parallel()
	for _, started := range []bool{false, true} {
		s := newStore(t)
		st := mustCreate(t, s, newState("bring the task back"))
		st.CurrentIteration, st.Phase = 2, PhaseExecution
		ev := "it works"
		st.FeatureListBaseline = &featurelist.List{Version: 1, Goal: st.Goal, Features: []featurelist.Feature{
			{ID: "feature-1", Category: "functional", Description: "a marker file", Steps: []string{"make it"}, Verify: "test -f m", Passes: true, Evidence: &ev}}}
		if err := s.SaveState(st); err != nil {
			t.Fatal(err)
		}
		committed, err := s.StateBytes(st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RestoreFeatureList(st.ID, st.FeatureListBaseline); err != nil {
			t.Fatal(err)
		}
		list, err := os.ReadFile(s.Path(st.ID, FileFeatureList))
		if err != nil {
			t.Fatal(err)
		}
		if _, lost := s.LostTask(st.ID); lost {
			t.Fatal("a task with its state.json is lost")
		}
		if err := os.RemoveAll(s.Dir(st.ID)); err != nil {
			t.Fatal(err)
		}
		if _, lost := s.LostTask(st.ID); lost {
			t.Fatal("lost without a noted turn commit")
		}
		note := TurnCommitNote{Iteration: 2, Mark: HistoryMark{Branch: "refs/heads/main", Commit: "0123456789abcdef0123456789abcdef01234567"}}
		if err := s.SaveTurnCommit(st.ID, note); err != nil {
			t.Fatal(err)
		}
		if started {
			if err := s.SaveGuardCopy(st.ID, 3, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		n, lost := s.LostTask(st.ID)
		if !lost || n != note || !slices.Equal(s.LostTasks(), []string{st.ID}) {
			t.Fatalf("LostTask %v %v, LostTasks %v; want the noted commit and the task", n, lost, s.LostTasks())
		}
		got, err := s.RecoverLostState(st.ID, n, committed, list, time.Unix(1e9, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got.History == nil || *got.History != note.Mark {
			t.Errorf("mark %+v, want the noted commit", got.History)
		}
		if want := map[bool]int{false: 2, true: 3}[started]; got.CurrentIteration != want || got.AwaitingTurn != started {
			t.Errorf("started %v: iteration %d awaiting %v, want %d %v", started, got.CurrentIteration, got.AwaitingTurn, want, started)
		}
		if loaded, err := s.LoadState(st.ID); err != nil || loaded.CurrentIteration != got.CurrentIteration || loaded.FeatureListBaseline.Passing() != 1 {
			t.Errorf("state.json not written back with its accepted list: %v", err)
		}
		if _, lost := s.LostTask(st.ID); lost {
			t.Error("still lost once recovered")
		}
	}
}
