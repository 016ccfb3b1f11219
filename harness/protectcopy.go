package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The protected files (--protect) as a turn found them are kept in the
// task's private folder, so that a run recovering a turn a crash cut
// short checks them as the end of the turn would have: protect.json
// names each file (its mode, link target, inode and SHA-256) and
// protect/<sha256> holds each content once, written only when new, so a
// turn whose protected files did not change writes only the index.

const (
	fileProtectIndex = "protect.json"
	dirProtectBlobs  = "protect"
)

// ProtectedEntry is one protected file as a turn found it.
type ProtectedEntry struct {
	Path   string      `json:"path"` // slash-separated, relative to the workspace
	Mode   fs.FileMode `json:"mode"`
	Target string      `json:"target,omitempty"` // a symbolic link's
	Dev    uint64      `json:"dev,omitempty"`
	Ino    uint64      `json:"ino,omitempty"`
	Links  uint64      `json:"links,omitempty"`
	Data   []byte      `json:"-"` // a regular file's content
	SHA256 string      `json:"sha256,omitempty"`
}

type protectIndex struct {
	Iteration int              `json:"iteration"`
	Files     []ProtectedEntry `json:"files"`
}

// KeepProtected keeps entries, the protected files of turn iteration of
// task id, in its private folder; contents already kept are not written
// again, and those no entry names any more are removed.
func (s *Store) KeepProtected(id string, iteration int, entries []ProtectedEntry) error {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	blobs := filepath.Join(dir, dirProtectBlobs)
	if err := os.MkdirAll(blobs, 0o700); err != nil {
		return fmt.Errorf("keep the protected files: %w", err)
	}
	named := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if !e.Mode.IsRegular() {
			continue
		}
		sum := sha256.Sum256(e.Data)
		e.SHA256 = hex.EncodeToString(sum[:])
		named[e.SHA256] = true
		p := filepath.Join(blobs, e.SHA256)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := s.writeKept(p, e.Data, 0o600); err != nil {
			return fmt.Errorf("keep the protected file %s: %w", e.Path, err)
		}
	}
	data, err := json.Marshal(protectIndex{Iteration: iteration, Files: entries})
	if err != nil {
		return err
	}
	if err := s.writeKept(filepath.Join(dir, fileProtectIndex), data, 0o600); err != nil {
		return fmt.Errorf("keep the protected files: %w", err)
	}
	old, _ := os.ReadDir(blobs)
	for _, b := range old {
		if !named[b.Name()] {
			_ = os.Remove(filepath.Join(blobs, b.Name()))
		}
	}
	return nil
}

// LoadProtected returns the protected files KeepProtected kept for turn
// iteration of task id, with their contents; ok is false when none were
// kept for that turn.
func (s *Store) LoadProtected(id string, iteration int) (entries []ProtectedEntry, ok bool, err error) {
	dir, err := s.privatePath(id) // never made here: having one registers a task
	if err != nil {
		return nil, false, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, fileProtectIndex))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the kept protected files: %w", err)
	}
	var idx protectIndex
	if err := json.Unmarshal(raw, &idx); err != nil || idx.Iteration != iteration {
		return nil, false, nil
	}
	for i := range idx.Files {
		e := &idx.Files[i]
		if !e.Mode.IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, dirProtectBlobs, e.SHA256))
		if err != nil {
			return nil, false, fmt.Errorf("read the kept protected file %s: %w", e.Path, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.SHA256 {
			return nil, false, fmt.Errorf("the kept protected file %s does not hold what was kept", e.Path)
		}
		e.Data = data
	}
	return idx.Files, true, nil
}
