package harness

import (
	"os"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// The copies a turn keeps in the task's private folder as it starts (the
// git guard's, .grub/config.toml's, the task folders' note, the protected
// files) are read only by a run that recovers the turn after a crash, and
// only once state.json says the turn was under way. So they need to be on
// disk before that state is, not each on its own: between BeginKeep and
// SyncKept they are written into one atomicfile.Batch, which syncs them
// all at one point, where each used to wait for the disk twice (its data,
// its folder). The note of a turn's commit (FileTurnCommit) waits for
// the same sync point, the next turn's, or the end of the run.

// BeginKeep starts the batch: the private copies written until SyncKept
// are renamed into place unsynced.
func (s *Store) BeginKeep() {
	s.keepMu.Lock()
	defer s.keepMu.Unlock()
	s.keeping = true
	if s.keep == nil {
		s.keep = &atomicfile.Batch{}
	}
}

// SyncKept syncs what was written since BeginKeep, and the notes written
// unsynced before it (writeDeferred), every file, then each folder, once;
// it ends the batch. With nothing written it does nothing. The caller
// saves state after it, never before; a run calls it once more as it
// ends.
func (s *Store) SyncKept() error {
	s.keepMu.Lock()
	b := s.keep
	s.keep, s.keeping = nil, false
	s.keepMu.Unlock()
	if b == nil {
		return nil
	}
	return b.Sync()
}

// writeKept replaces path (a file of the private folder) with data: into
// the batch between BeginKeep and SyncKept, else atomically and synced.
func (s *Store) writeKept(path string, data []byte, perm os.FileMode) error {
	s.keepMu.Lock()
	b := s.keep
	if !s.keeping {
		b = nil
	}
	s.keepMu.Unlock()
	if b != nil {
		return b.WriteFile(path, data, perm)
	}
	return atomicfile.WriteFile(path, data, perm)
}

// writeDeferred replaces path with data atomically and leaves its sync to
// the next SyncKept, batch or not: for a note that state.json, saved
// after that sync point, makes redundant (the turn commit's, whose
// commit the next turn's state names).
func (s *Store) writeDeferred(path string, data []byte, perm os.FileMode) error {
	s.keepMu.Lock()
	if s.keep == nil {
		s.keep = &atomicfile.Batch{}
	}
	b := s.keep
	s.keepMu.Unlock()
	return b.WriteFile(path, data, perm)
}
