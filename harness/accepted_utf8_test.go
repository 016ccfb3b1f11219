package harness

import (
	"bytes"
	"os"
	"testing"

	"github.com/grub-dev/grub/featurelist"
)

// A goal with a byte that is not UTF-8 (grub edit --goal from a Latin-1
// terminal) must not make the encoder's bytes differ from Marshal's after
// a load: Marshal writes such a byte as "\ufffd", which reads back as a
// real U+FFFD, which Marshal writes raw. Had Prime taken the file's bytes
// as Marshal's, every digest state.json names from then on would be of
// the escaped form while feature-list.json holds the raw one, and a clone
// (or lost accepted files) would be a DamagedError.
func TestNonUTF8GoalKeepsMarshalBytes(t *testing.T) {
	s, st := newTaskFolder(t)
	st.FeatureListBaseline.Goal = st.Goal
	saveState(t, s, st)
	if err := s.SetGoal(st, "goal \xff latin-1"); err != nil {
		t.Fatal(err)
	}
	saveState(t, s, st)

	s.remember(st.ID, nil) // the next run
	st2, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	l := st2.FeatureListBaseline
	enc, _ := s.ListBytes(l)
	want, _ := featurelist.Marshal(l)
	if !bytes.Equal(enc, want) {
		t.Errorf("after a load, Encoder.Marshal differs from featurelist.Marshal:\n%s\nwant\n%s", enc, want)
	}
	// A turn flips a feature; grub keeps feature-list.json the accepted list.
	l.Features[1].Passes = true
	if err := s.RestoreFeatureList(st2.ID, l); err != nil {
		t.Fatal(err)
	}
	saveState(t, s, st2)
	// A clone: only the committed files.
	os.Remove(s.Path(st.ID, FileAcceptedList))
	os.Remove(s.Path(st.ID, FileAcceptedChanges))
	s.remember(st.ID, nil)
	if _, err := s.LoadState(st.ID); err != nil {
		t.Fatalf("clone: %v", err)
	}
}
