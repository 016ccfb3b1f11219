package harness

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/grub-dev/grub/internal/failpoint"
)

// TestHelperSetGoalProcess is not a test: run by TestAcceptedListSurvivesTwoCrashes
// in a child process, it loads the task, changes its goal as grub edit
// does (SetGoal, then SaveState) and dies at the failpoint the parent names.
func TestHelperSetGoalProcess(t *testing.T) {
	root, id, goal := os.Getenv("GRUB_TEST_ROOT"), os.Getenv("GRUB_TEST_ID"), os.Getenv("GRUB_TEST_GOAL")
	if root == "" {
		t.Skip("helper")
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.LoadState(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetGoal(st, goal); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveState(st); err != nil {
		t.Fatal(err)
	}
}

func setGoalInChild(t *testing.T, s *Store, id, goal, fp string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSetGoalProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GRUB_TEST_ROOT="+s.Root, "GRUB_TEST_ID="+id, "GRUB_TEST_GOAL="+goal, failpoint.Env+"="+fp)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != failpoint.ExitCode {
		t.Fatalf("helper did not die at %s: %v\n%s", fp, err, out)
	}
}

// Two goal edits, each killed at grub's own failpoints: the first after
// state.json names its new base (still in accepted-list.next.json), the
// second after it wrote its own new base, before state.json names it.
// state.json still names the first edit's list, which the second must
// not have overwritten (it puts the .next file in place first): it is
// the only copy, since feature-list.json already holds the second edit's
// goal (SetGoal writes it before the save).
func TestAcceptedListSurvivesTwoCrashes(t *testing.T) {
	s, st := newTaskFolder(t)
	st.FeatureListBaseline.Goal = st.Goal
	saveState(t, s, st)
	if err := s.SaveFeatureList(st.ID, st.FeatureListBaseline); err != nil {
		t.Fatal(err)
	}
	setGoalInChild(t, s, st.ID, "goal two", failpoint.StateNamesAccepted)
	if _, err := s.LoadState(st.ID); err != nil {
		t.Fatalf("after the first crash: %v", err)
	}
	setGoalInChild(t, s, st.ID, "goal three", failpoint.AcceptedWritten)
	s.remember(st.ID, nil)
	if _, err := s.LoadState(st.ID); err != nil {
		t.Fatalf("after the second crash state.json names a list no file holds: %v", err)
	}
}
