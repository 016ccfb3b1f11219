package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileGuardCopy is the file of a task's private folder (PrivateDir) that
// holds the git guard's copy taken before the current turn, so that a
// resume after a crash mid-turn compares the git directory with it as the
// end of the turn would have. It lives outside the workspace: nothing the
// turn runs can write it.
const FileGuardCopy = "git-guard.json"

// guardCopyFile is FileGuardCopy's content: the turn it was taken for and
// the guard's own encoding of its copy, kept as it is.
type guardCopyFile struct {
	Iteration int             `json:"iteration"`
	Copy      json.RawMessage `json:"copy"`
}

// SaveGuardCopy writes the git guard's copy taken before turn iteration
// of task id (data is the guard's encoding, JSON) to the task's private
// folder, atomically and synced.
func (s *Store) SaveGuardCopy(id string, iteration int, data []byte) error {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	out, err := json.Marshal(guardCopyFile{Iteration: iteration, Copy: data})
	if err != nil {
		return fmt.Errorf("the git guard's copy: %w", err)
	}
	if err := s.writeKept(filepath.Join(dir, FileGuardCopy), out, 0o600); err != nil {
		return fmt.Errorf("keep the git guard's copy: %w", err)
	}
	return nil
}

// LoadGuardCopy reads the copy SaveGuardCopy kept for task id, with the
// turn it was taken for; ok is false when there is none.
func (s *Store) LoadGuardCopy(id string) (iteration int, data []byte, ok bool, err error) {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return 0, nil, false, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, FileGuardCopy))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, fmt.Errorf("read the git guard's copy: %w", err)
	}
	var f guardCopyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, nil, false, fmt.Errorf("read the git guard's copy %s: %w", filepath.Join(dir, FileGuardCopy), err)
	}
	return f.Iteration, f.Copy, true, nil
}
