package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/featurelist"
)

// saveState saves st and returns state.json's bytes.
func saveState(t *testing.T, s *Store, st *State) []byte {
	t.Helper()
	if err := s.SaveState(st); err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	state, err := s.StateBytes(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// loadList checks that LoadState gives want as the accepted list.
func loadList(t *testing.T, s *Store, id, what string, want *featurelist.List) {
	t.Helper()
	got, err := s.LoadState(id)
	if err != nil || !featurelist.Equal(got.FeatureListBaseline, want) {
		t.Fatalf("%s: LoadState = %v, %+v; want %+v", what, err, got, want)
	}
}

func newTaskFolder(t *testing.T) (*Store, *State) {
	t.Helper()
	s := newStore(t)
	st := fullState()
	if err := os.MkdirAll(s.Dir(st.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	return s, st
}

// TestSaveStateKeepsTheListApart checks the files a save writes: state.json
// is json.MarshalIndent of the state without the list, naming it; the
// first save writes the list as a base in featurelist.Marshal's bytes; a
// flip appends a change and leaves the base; a goal edit writes a new
// base; LoadState gives the list back each time.
func TestSaveStateKeepsTheListApart(t *testing.T) {
	s, st := newTaskFolder(t)
	st.Goal = `goal with <html> & "quotes" and é`
	st.FeatureListBaseline.Goal = st.Goal
	base := func() []byte { b, _ := os.ReadFile(s.Path(st.ID, FileAcceptedList)); return b }
	check := func(what string, changes bool) {
		t.Helper()
		state := saveState(t, s, st)
		rest := *st
		rest.FeatureListBaseline = nil
		want, _ := json.MarshalIndent(&rest, "", "  ")
		if want = append(want, '\n'); !bytes.Equal(state, want) || bytes.Contains(state, []byte("featureListBaseline")) {
			t.Fatalf("%s: state.json is not json.MarshalIndent's bytes without the list:\n%s\nwant\n%s", what, state, want)
		}
		if st.FeatureListBaseline == nil {
			if st.AcceptedList != nil {
				t.Fatalf("%s: no list, but state names %+v", what, st.AcceptedList)
			}
			return
		}
		full, _ := featurelist.Marshal(st.FeatureListBaseline)
		if acc := st.AcceptedList; acc == nil || acc.SHA256 != digestOf(full) || acc.BaseSHA256 != digestOf(base()) || (acc.ChangesBytes > 0) != changes {
			t.Fatalf("%s: state names %+v; the list's digest is %s, the base's %s; want changes %v", what, acc, digestOf(full), digestOf(base()), changes)
		}
		if !changes && !bytes.Equal(base(), full) {
			t.Fatalf("%s: accepted-list.json is not Marshal's bytes:\n%s", what, base())
		}
		loadList(t, s, st.ID, what, st.FeatureListBaseline)
	}
	check("first save", false)
	check("same list", false)
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	check("flip in place", true)
	ev := "seen <ok>"
	st.FeatureListBaseline.Features[0].Evidence = &ev
	check("evidence in place", true)
	st.FeatureListBaseline.Goal = "a new goal </x>"
	check("goal changed in place", false)
	st.FeatureListBaseline = nil
	check("no list", false)

	bad := fullState()
	bad.FeatureListBaseline.Features[0].ID = "Bad Id"
	err := s.SaveState(bad)
	if !strings.Contains(fmt.Sprint(err), "accepted-list.json at /features/0/id") {
		t.Fatalf("SaveState of a bad list = %v, want its pointer", err)
	}
}

// TestAcceptedChangesStayBounded flips features many times: the changes
// grow to their bound, then a new base is written, and the list always
// loads.
func TestAcceptedChangesStayBounded(t *testing.T) {
	s, st := newTaskFolder(t)
	bases := map[string]bool{}
	long := strings.Repeat("evidence ", 60)
	for n := range 200 {
		f := &st.FeatureListBaseline.Features[n%len(st.FeatureListBaseline.Features)]
		ev := fmt.Sprintf("%s%d", long, n)
		f.Passes, f.Evidence = true, &ev
		saveState(t, s, st)
		bases[st.AcceptedList.BaseSHA256] = true
		if st.AcceptedList.ChangesBytes > minChanges {
			t.Fatalf("save %d: %d bytes of changes, more than %d", n, st.AcceptedList.ChangesBytes, minChanges)
		}
	}
	if len(bases) < 2 {
		t.Errorf("200 changes of about 600 bytes never wrote a new base")
	}
	loadList(t, s, st.ID, "after 200 changes", st.FeatureListBaseline)
}

// TestAcceptedListSurvivesEveryCrashPoint plays a kill at each step of
// saves that change the list (an appended change, a new base), and
// files lost or changed, and checks what LoadState finds.
func TestAcceptedListSurvivesEveryCrashPoint(t *testing.T) {
	s, st := newTaskFolder(t)
	saveState(t, s, st)
	old := st.FeatureListBaseline.Clone()
	oldAcc := *st.AcceptedList
	oldState, _ := s.StateBytes(st.ID)
	restoreState := func() {
		t.Helper()
		if err := os.WriteFile(s.Path(st.ID, FileState), oldState, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A change appended, state.json not yet written: the old list; the
	// next save appends where state.json says, over the stray line.
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	saveState(t, s, st)
	restoreState()
	loadList(t, s, st.ID, "change appended, state not written", &old)
	st.AcceptedList = &oldAcc
	st.FeatureListBaseline.Features[1].Description = "changed again"
	saveState(t, s, st)
	loadList(t, s, st.ID, "the save after the stray line", st.FeatureListBaseline)
	if st.AcceptedList.ChangesBytes == 0 {
		t.Fatalf("the save after a stray line wrote a new base, want an append")
	}

	// A new base in accepted-list.next.json that state.json names, not yet
	// renamed (a goal edit writes a new base).
	saveState(t, s, st)
	cur := st.FeatureListBaseline.Clone()
	st.FeatureListBaseline.Goal = "another goal"
	data, digest, err := s.acceptedBytes(st.ID, st.FeatureListBaseline)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writeOwnFile(st.ID, fileAcceptedNext, data, 0o644); err != nil {
		t.Fatal(err)
	}
	loadList(t, s, st.ID, "new base written, state not", &cur)
	st.AcceptedList = &AcceptedList{SHA256: digest, BaseSHA256: digest}
	state, _ := s.encodeState(st)
	if err := s.writeOwnFile(st.ID, FileState, state, 0o644); err != nil {
		t.Fatal(err)
	}
	s.remember(st.ID, nil) // a new process
	loadList(t, s, st.ID, "state names the new base, not yet renamed", st.FeatureListBaseline)
	saveState(t, s, st)
	if _, err := os.Lstat(s.Path(st.ID, fileAcceptedNext)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("accepted-list.next.json is still there after a save: %v", err)
	}
	loadList(t, s, st.ID, "after the next save", st.FeatureListBaseline)
}

// TestAcceptedFilesChangedCountForNothing changes, plants or loses the
// files: the list is taken from feature-list.json when that is the list,
// else the task is damaged; the next save writes the files again.
func TestAcceptedFilesChangedCountForNothing(t *testing.T) {
	s, st := newTaskFolder(t)
	saveState(t, s, st)
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	saveState(t, s, st)
	other := st.FeatureListBaseline.Clone()
	other.Features[0].Description = "planted"
	planted, _ := json.Marshal(acceptedChange{Index: 0, Feature: other.Features[0]})
	for _, tc := range []struct {
		name   string
		damage func()
	}{
		{"a changed change", func() {
			os.WriteFile(s.Path(st.ID, FileAcceptedChanges), append(planted, '\n'), 0o644)
		}},
		{"a planted base", func() {
			b, _ := featurelist.Marshal(&other)
			os.WriteFile(s.Path(st.ID, FileAcceptedList), b, 0o644)
		}},
		{"lost changes", func() { os.Remove(s.Path(st.ID, FileAcceptedChanges)) }},
		{"lost base", func() { os.Remove(s.Path(st.ID, FileAcceptedList)) }},
	} {
		// A change on top of a base, so there are both to damage.
		saveState(t, s, st)
		st.FeatureListBaseline.Features[1].Passes = !st.FeatureListBaseline.Features[1].Passes
		saveState(t, s, st)
		if st.AcceptedList.ChangesBytes == 0 {
			t.Fatalf("%s: a flip after a save wrote a new base, want an append", tc.name)
		}
		want := st.FeatureListBaseline.Clone()
		s.remember(st.ID, nil)
		tc.damage()
		os.WriteFile(s.Path(st.ID, FileFeatureList), []byte(`{"torn`), 0o644)
		_, err := s.LoadState(st.ID)
		var de *DamagedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "git checkout HEAD --") {
			t.Fatalf("%s, feature-list.json not the list: LoadState = %v, want a DamagedError", tc.name, err)
		}
		compact, _ := json.Marshal(want) // as an agent may write it
		os.WriteFile(s.Path(st.ID, FileFeatureList), compact, 0o644)
		loadList(t, s, st.ID, tc.name+", from feature-list.json", &want)
		if s.AcceptedFilesHold(st) {
			t.Fatalf("%s: AcceptedFilesHold says yes", tc.name)
		}
		saveState(t, s, st)
		if !s.AcceptedFilesHold(st) {
			t.Fatalf("%s: the next save did not write the files again", tc.name)
		}
	}
}

// TestLoadStateReadsTheListInState checks that a state.json written before
// the list had files of its own (the list inside it) loads, and that its
// next save moves the list out.
func TestLoadStateReadsTheListInState(t *testing.T) {
	s, st := newTaskFolder(t)
	type oldState struct {
		State
		Baseline *featurelist.List `json:"featureListBaseline"`
	}
	inline, _ := json.MarshalIndent(oldState{State: *st, Baseline: st.FeatureListBaseline}, "", "  ")
	if !bytes.Contains(inline, []byte(`"featureListBaseline": {`)) || bytes.Contains(inline, []byte("acceptedList")) {
		t.Fatalf("the old form is not as it was:\n%s", inline)
	}
	if err := os.WriteFile(s.Path(st.ID, FileState), inline, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadState(st.ID)
	if err != nil || !featurelist.Equal(got.FeatureListBaseline, st.FeatureListBaseline) {
		t.Fatalf("LoadState of the old form = %v, %+v", err, got)
	}
	state := saveState(t, s, got)
	if bytes.Contains(state, []byte("featureListBaseline")) || !s.AcceptedFilesHold(got) {
		t.Fatalf("the save after an old state.json kept the list in it:\n%s", state)
	}
}

// A second name for the changes file (a hard link an agent made) is not
// written through: the save starts from a new base, and the other name
// keeps what it had.
func TestAcceptedChangesHardLinkIsNotWrittenThrough(t *testing.T) {
	s, st := newTaskFolder(t)
	saveState(t, s, st)
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	saveState(t, s, st)
	other := filepath.Join(s.Root, "copy.jsonl")
	if err := os.Link(s.Path(st.ID, FileAcceptedChanges), other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(other)
	st.FeatureListBaseline.Features[1].Passes = !st.FeatureListBaseline.Features[1].Passes
	saveState(t, s, st)
	if after, _ := os.ReadFile(other); !bytes.Equal(before, after) {
		t.Fatalf("the hard link was written through:\n%s\nthen\n%s", before, after)
	}
	if st.AcceptedList.ChangesBytes != 0 {
		t.Errorf("the save appended to a file with two names: %+v", st.AcceptedList)
	}
	loadList(t, s, st.ID, "after the save", st.FeatureListBaseline)
}

// A goal that is not valid UTF-8 is kept as a JSON reader reads it back.
func TestGoalIsValidUTF8(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("caf\xe9"))
	if st.Goal != "caf\uFFFD" {
		t.Errorf("created with goal %q", st.Goal)
	}
	if err := s.SetGoal(st, "na\xefve"); err != nil || st.Goal != "na\uFFFDve" {
		t.Errorf("SetGoal gave %q, %v", st.Goal, err)
	}
}

// TestStoresKeepTheirOwnCaches: two Stores of one workspace (two runs in
// one process, a test and the code it tests) share no remembered state.
// A save by one leaves the other knowing nothing of it, and a save by the
// other afterwards, which then finds the files changed under its memory,
// writes a new base rather than appending to a list it no longer knows.
func TestStoresKeepTheirOwnCaches(t *testing.T) {
	s1, st := newTaskFolder(t)
	saveState(t, s1, st)
	s2, err := s1.At(s1.Root)
	if err != nil {
		t.Fatal(err)
	}
	if s2.remembered(st.ID) != nil || s2.accepted.data != nil {
		t.Fatal("a new Store remembers what another Store wrote")
	}
	st2, err := s2.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s1.remembered(st.ID) == nil || s2.remembered(st.ID) == nil {
		t.Fatal("a Store does not remember the list it wrote or read")
	}
	st2.FeatureListBaseline.Features[0].Passes = !st2.FeatureListBaseline.Features[0].Passes
	saveState(t, s2, st2)
	if st2.AcceptedList.ChangesBytes == 0 {
		t.Fatal("the second Store's flip wrote a new base, want an append to the base it read")
	}
	// s1 still remembers the files as it wrote them: they changed since.
	st.FeatureListBaseline.Features[1].Passes = !st.FeatureListBaseline.Features[1].Passes
	saveState(t, s1, st)
	if st.AcceptedList.ChangesBytes != 0 {
		t.Fatal("the first Store appended to files another Store changed since it wrote them")
	}
	s3, _ := s1.At(s1.Root)
	loadList(t, s3, st.ID, "after saves by two Stores", st.FeatureListBaseline)
}
