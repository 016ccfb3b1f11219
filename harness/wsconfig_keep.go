package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// fileConfigCopy is the file of a task's private folder that holds
// .grub/config.toml as the current turn started with it, so that a resume
// after a crash mid-turn puts it back as the end of the turn would have
// (the turn's own check of it, RestoreConfig, never ran).
const fileConfigCopy = "workspace-config.json"

// configCopyFile is fileConfigCopy's content.
type configCopyFile struct {
	Iteration int         `json:"iteration"`
	Kind      string      `json:"kind"` // absent, file, link, dir
	Mode      fs.FileMode `json:"mode,omitempty"`
	Data      []byte      `json:"data,omitempty"`
	Link      string      `json:"link,omitempty"`
}

// SaveConfigCopy keeps snap, taken before turn iteration of task id, in
// the task's private folder (atomically, synced).
func (s *Store) SaveConfigCopy(id string, iteration int, snap ConfigSnapshot) error {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	f := configCopyFile{Iteration: iteration, Kind: "absent", Data: snap.data, Link: snap.link}
	if snap.info != nil {
		m := snap.info.Mode()
		f.Mode = m.Perm()
		switch {
		case m.IsRegular():
			f.Kind = "file"
		case m&fs.ModeSymlink != 0:
			f.Kind = "link"
		case m.IsDir():
			f.Kind = "dir"
		default:
			return fmt.Errorf("keep %s: it is %s", s.Rel(s.WorkspaceConfigPath()), kindOf(m))
		}
	}
	out, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := s.writeKept(filepath.Join(dir, fileConfigCopy), out, 0o600); err != nil {
		return fmt.Errorf("keep a copy of %s: %w", s.Rel(s.WorkspaceConfigPath()), err)
	}
	return nil
}

// LoadConfigCopy reads what SaveConfigCopy kept for task id, with the
// turn it was taken for; ok is false when nothing was kept.
func (s *Store) LoadConfigCopy(id string) (iteration int, snap ConfigSnapshot, ok bool, err error) {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return 0, ConfigSnapshot{}, false, err
	}
	path := filepath.Join(dir, fileConfigCopy)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ConfigSnapshot{}, false, nil
	}
	if err != nil {
		return 0, ConfigSnapshot{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	var f configCopyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, ConfigSnapshot{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	snap = ConfigSnapshot{data: f.Data, link: f.Link, kept: true}
	var typ fs.FileMode
	switch f.Kind {
	case "absent":
		return f.Iteration, snap, true, nil
	case "file":
	case "link":
		typ = fs.ModeSymlink
	case "dir":
		typ = fs.ModeDir
	default:
		return 0, ConfigSnapshot{}, false, fmt.Errorf("read %s: unknown kind %q", path, f.Kind)
	}
	snap.info = keptInfo{mode: typ | f.Mode.Perm()}
	return f.Iteration, snap, true, nil
}

// keptInfo is the fs.FileInfo of a kept snapshot: its mode only.
type keptInfo struct{ mode fs.FileMode }

func (k keptInfo) Name() string       { return "config.toml" }
func (k keptInfo) Size() int64        { return 0 }
func (k keptInfo) Mode() fs.FileMode  { return k.mode }
func (k keptInfo) ModTime() time.Time { return time.Time{} }
func (k keptInfo) IsDir() bool        { return k.mode.IsDir() }
func (k keptInfo) Sys() any           { return nil }
