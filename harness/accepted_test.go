package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/grub-dev/grub/featurelist"
)

// saveState saves st and returns state.json's and accepted-list.json's
// bytes.
func saveState(t *testing.T, s *Store, st *State) (state, accepted []byte) {
	t.Helper()
	if err := s.SaveState(st); err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	state, err := s.StateBytes(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	accepted, _ = os.ReadFile(s.Path(st.ID, FileAcceptedList))
	return state, accepted
}

// TestSaveStateKeepsTheListApart checks the files a save writes: state.json
// is json.MarshalIndent of the state without the list, naming the list
// by the SHA-256 of accepted-list.json, which holds featurelist.Marshal's
// bytes; a list changed in place (SetGoal does) is written again; and
// LoadState gives the list back.
func TestSaveStateKeepsTheListApart(t *testing.T) {
	s := newStore(t)
	st := fullState()
	st.Goal = `goal with <html> & "quotes" and é`
	st.FeatureListBaseline.Goal = st.Goal
	if err := os.MkdirAll(s.Dir(st.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		state, accepted := saveState(t, s, st)
		rest := *st
		rest.FeatureListBaseline = nil
		want, _ := json.MarshalIndent(&rest, "", "  ")
		if want = append(want, '\n'); !bytes.Equal(state, want) {
			t.Fatalf("%s: state.json is not json.MarshalIndent's bytes:\n%s\nwant\n%s", what, state, want)
		}
		if bytes.Contains(state, []byte("featureListBaseline")) {
			t.Fatalf("%s: state.json holds the list:\n%s", what, state)
		}
		if st.FeatureListBaseline == nil {
			if st.AcceptedListSHA256 != "" {
				t.Fatalf("%s: no list, but state names %s", what, st.AcceptedListSHA256)
			}
			return
		}
		wantList, _ := featurelist.Marshal(st.FeatureListBaseline)
		if !bytes.Equal(accepted, wantList) || digestOf(accepted) != st.AcceptedListSHA256 {
			t.Fatalf("%s: accepted-list.json is not Marshal's bytes with the digest state names:\n%s", what, accepted)
		}
		back, err := s.LoadState(st.ID)
		if err != nil || !featurelist.Equal(back.FeatureListBaseline, st.FeatureListBaseline) {
			t.Fatalf("%s: LoadState = %v, list %+v", what, err, back)
		}
	}
	check("first save")
	check("same list")
	st.FeatureListBaseline.Goal = "a new goal </x>"
	check("goal changed in place")
	st.FeatureListBaseline.Features[0].Passes = !st.FeatureListBaseline.Features[0].Passes
	check("flip in place")
	ev := "seen <ok>"
	st.FeatureListBaseline.Features[0].Evidence = &ev
	check("evidence in place")
	st.FeatureListBaseline = nil
	check("no list")

	bad := fullState()
	bad.FeatureListBaseline.Features[0].ID = "Bad Id"
	err := s.SaveState(bad)
	if !strings.Contains(fmt.Sprint(err), "accepted-list.json at /features/0/id") {
		t.Fatalf("SaveState of a bad list = %v, want its pointer", err)
	}
}

// TestAcceptedListSurvivesEveryCrashPoint plays a kill at each step of a
// save that changes the list (accepted.go's three steps), and others
// that lose or change the file, and checks what LoadState finds.
func TestAcceptedListSurvivesEveryCrashPoint(t *testing.T) {
	s := newStore(t)
	old := fullState()
	if err := os.MkdirAll(s.Dir(old.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	saveState(t, s, old)
	oldList := old.FeatureListBaseline.Clone()
	next := fullState()
	next.FeatureListBaseline.Features[0].Passes = !next.FeatureListBaseline.Features[0].Passes
	data, accepted, err := s.marshalState(next)
	if err != nil {
		t.Fatal(err)
	}
	load := func(what string, want *featurelist.List) {
		t.Helper()
		got, err := s.LoadState(old.ID)
		if err != nil || !featurelist.Equal(got.FeatureListBaseline, want) {
			t.Fatalf("%s: LoadState = %v, %+v; want %+v", what, err, got, want)
		}
	}
	// Killed after step 1: state.json names the old list.
	if err := s.writeOwnFile(old.ID, fileAcceptedNext, accepted, 0o644); err != nil {
		t.Fatal(err)
	}
	load("after step 1", &oldList)
	// Killed after step 2: the new list is only in accepted-list.next.json.
	if err := s.writeOwnFile(old.ID, FileState, data, 0o644); err != nil {
		t.Fatal(err)
	}
	load("after step 2", next.FeatureListBaseline)
	// The next save puts it in place.
	saveState(t, s, next)
	if _, err := os.Lstat(s.Path(old.ID, fileAcceptedNext)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("accepted-list.next.json is still there after a save: %v", err)
	}
	load("after the next save", next.FeatureListBaseline)

	// A changed accepted-list.json counts for nothing: the list is taken
	// from feature-list.json when it is that list, else the task is damaged.
	other := next.FeatureListBaseline.Clone()
	other.Features[0].Description = "planted"
	planted, _ := featurelist.Marshal(&other)
	if err := os.WriteFile(s.Path(old.ID, FileAcceptedList), planted, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = s.LoadState(old.ID)
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "git checkout HEAD --") {
		t.Fatalf("LoadState with a changed accepted-list.json and no matching feature-list.json = %v, want a DamagedError", err)
	}
	if err := s.SaveFeatureList(old.ID, next.FeatureListBaseline); err != nil {
		t.Fatal(err)
	}
	load("from feature-list.json", next.FeatureListBaseline)
	// feature-list.json in another form (as an agent may write it) still counts.
	compact, _ := json.Marshal(next.FeatureListBaseline)
	if err := os.WriteFile(s.Path(old.ID, FileFeatureList), compact, 0o644); err != nil {
		t.Fatal(err)
	}
	load("from a compact feature-list.json", next.FeatureListBaseline)
	// The next save writes accepted-list.json again.
	saveState(t, s, next)
	if got, _ := os.ReadFile(s.Path(old.ID, FileAcceptedList)); digestOf(got) != next.AcceptedListSHA256 {
		t.Fatalf("the save after a changed accepted-list.json did not write it again:\n%s", got)
	}
}

// TestLoadStateReadsTheListInState checks that a state.json written before
// accepted-list.json existed (the list inside it) loads, and that its
// next save moves the list out.
func TestLoadStateReadsTheListInState(t *testing.T) {
	s := newStore(t)
	st := fullState()
	if err := os.MkdirAll(s.Dir(st.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	type oldState struct {
		State
		Baseline *featurelist.List `json:"featureListBaseline"`
	}
	inline, _ := json.MarshalIndent(oldState{State: *st, Baseline: st.FeatureListBaseline}, "", "  ")
	if !bytes.Contains(inline, []byte(`"featureListBaseline": {`)) {
		t.Fatalf("the old form has no list:\n%s", inline)
	}
	if err := os.WriteFile(s.Path(st.ID, FileState), inline, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadState(st.ID)
	if err != nil || !featurelist.Equal(got.FeatureListBaseline, st.FeatureListBaseline) {
		t.Fatalf("LoadState of the old form = %v, %+v", err, got)
	}
	state, accepted := saveState(t, s, got)
	if bytes.Contains(state, []byte("featureListBaseline")) || digestOf(accepted) != got.AcceptedListSHA256 {
		t.Fatalf("the save after an old state.json kept the list in it:\n%s", state)
	}
}
