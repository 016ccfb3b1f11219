package harness

import (
	"testing"
)

// Between BeginKeep and SyncKept the copies a starting turn keeps in the
// private folder (the git guard's, config.toml's, the task folders'
// note) go into one batch, readable at once and synced together by
// SyncKept; outside a batch each is written synced on its own.
func TestKeptCopiesShareOneSyncPoint(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	config, err := s.SnapshotConfig()
	if err != nil {
		t.Fatal(err)
	}
	s.BeginKeep()
	if err := s.SaveGuardCopy(st.ID, 3, []byte(`{"hooks":{}}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveConfigCopy(st.ID, 3, config); err != nil {
		t.Fatal(err)
	}
	if err := s.NoteTaskFolders(st.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.keep.Pending(); n != 3 {
		t.Fatalf("%d copies wait for the sync point, want 3", n)
	}
	// Readable before the sync, as the recovery reads them.
	if it, data, ok, err := s.LoadGuardCopy(st.ID); err != nil || !ok || it != 3 || string(data) != `{"hooks":{}}` {
		t.Fatalf("LoadGuardCopy in the batch = %d, %s, %v, %v", it, data, ok, err)
	}
	if it, _, ok, err := s.LoadConfigCopy(st.ID); err != nil || !ok || it != 3 {
		t.Fatalf("LoadConfigCopy in the batch = %d, %v, %v", it, ok, err)
	}
	if err := s.SyncKept(); err != nil {
		t.Fatal(err)
	}
	if s.keep != nil {
		t.Fatal("the batch is still open after SyncKept")
	}
	if err := s.SyncKept(); err != nil {
		t.Errorf("SyncKept with no batch: %v", err)
	}
	// After it, a copy is written on its own again.
	if err := s.SaveGuardCopy(st.ID, 4, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if it, _, _, _ := s.LoadGuardCopy(st.ID); it != 4 {
		t.Errorf("the copy after the batch is for turn %d, want 4", it)
	}
}

// The note of a turn's commit is in place at once and waits for the next
// sync point (the next turn's copies, or the end of the run): it goes
// into that turn's batch rather than syncing on its own.
func TestTurnCommitNoteWaitsForTheNextSyncPoint(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	n := TurnCommitNote{Iteration: 2, Mark: HistoryMark{Branch: "main", Commit: "abc123"}}
	if err := s.SaveTurnCommit(st.ID, n); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.LoadTurnCommit(st.ID); err != nil || !ok || got != n {
		t.Fatalf("LoadTurnCommit = %+v, %v, %v; want %+v", got, ok, err, n)
	}
	if s.keep == nil || s.keep.Pending() != 1 {
		t.Fatal("the note is not waiting for the next sync point")
	}
	s.BeginKeep()
	if err := s.NoteTaskFolders(st.ID); err != nil {
		t.Fatal(err)
	}
	if n := s.keep.Pending(); n != 2 {
		t.Fatalf("%d files wait for the turn's sync point, want the note and the copy", n)
	}
	if err := s.SyncKept(); err != nil {
		t.Fatal(err)
	}
	if s.keep != nil {
		t.Error("files still wait after SyncKept")
	}
}
