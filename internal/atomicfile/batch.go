package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// A Batch replaces several files as WriteFile does, with one sync point
// for all of them: WriteFile renames each into place without syncing it,
// and Sync then fsyncs every file written and each of their folders once.
// The first fsync makes the file system write what the others need too
// (the journal's commit holds every rename), so a batch of three files
// waits for the disk about once, where WriteFile waits twice a file.
//
// Until Sync returns, a crash of the machine (not of grub: the renames are
// atomic) may leave any file of the batch empty or its rename undone, so a
// batch is for files that nothing trusts until a file written after Sync
// says they hold (state.json, saved after the copies kept for a turn).
// The zero Batch is ready; it is safe for concurrent use.
type Batch struct {
	mu    sync.Mutex
	files []string
}

// WriteFile replaces path with data (mode perm) atomically, unsynced
// until Sync.
func (b *Batch) WriteFile(path string, data []byte, perm os.FileMode) error {
	if err := writeFile(path, data, perm, false); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !slices.Contains(b.files, path) {
		b.files = append(b.files, path)
	}
	return nil
}

// Sync fsyncs every file written since the last Sync, then each of their
// folders once, and empties the batch. A file or folder that cannot be
// synced is an error; the batch is emptied all the same.
func (b *Batch) Sync() error {
	b.mu.Lock()
	files := b.files
	b.files = nil
	b.mu.Unlock()
	var dirs []string
	for _, p := range files {
		if err := syncFile(p); err != nil {
			return err
		}
		if d := filepath.Dir(p); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if synced != nil {
			synced(d)
		}
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// Pending is how many files wait for Sync.
func (b *Batch) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.files)
}

// synced, when set (tests), is told each path Sync fsyncs.
var synced func(path string)

func syncFile(path string) error {
	if synced != nil {
		synced(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}
