package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// ConfigSnapshot is the workspace's .grub/config.toml as a turn started
// with it, to put back if the turn touches it (RestoreConfig). The
// controller treats the file as bytes: what it means is internal/config's.
type ConfigSnapshot struct {
	info fs.FileInfo // nil: there was no file
	data []byte      // a regular file's content
	link string      // a symbolic link's target
	// kept marks a snapshot read back from the private folder
	// (LoadConfigCopy): it has no inode to compare with.
	kept bool
}

// SnapshotConfig records .grub/config.toml as it is now.
func (s *Store) SnapshotConfig() (ConfigSnapshot, error) {
	path := s.WorkspaceConfigPath()
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return ConfigSnapshot{}, nil
	}
	if err != nil {
		return ConfigSnapshot{}, fmt.Errorf("read %s: %w", s.Rel(path), err)
	}
	snap := ConfigSnapshot{info: fi}
	switch {
	case fi.Mode().IsRegular():
		if snap.data, err = os.ReadFile(path); err != nil {
			return ConfigSnapshot{}, fmt.Errorf("read %s: %w", s.Rel(path), err)
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		if snap.link, err = os.Readlink(path); err != nil {
			return ConfigSnapshot{}, fmt.Errorf("read %s: %w", s.Rel(path), err)
		}
	}
	return snap, nil
}

// RestoreConfig compares .grub/config.toml with snap and, when the file
// was created, changed, replaced (another inode, a link, a folder) or
// deleted since, puts snap back and says what happened, e.g.
// ".grub/config.toml was created". It returns "" when nothing changed.
// A folder that was there at the start is compared as a folder only.
func (s *Store) RestoreConfig(snap ConfigSnapshot) (string, error) {
	path := s.WorkspaceConfigPath()
	rel := s.Rel(path)
	now, err := s.SnapshotConfig()
	if err != nil {
		return "", err
	}
	what := configChange(snap, now)
	if what == "" {
		return "", nil
	}
	if grub, err := os.Lstat(filepath.Dir(path)); err != nil || !grub.IsDir() {
		return rel + " " + what + " (and grub's folder is not a folder: nothing to put back)", nil
	}
	if now.info != nil {
		if err := os.RemoveAll(path); err != nil { // a link itself, not its target
			return "", fmt.Errorf("remove %s to restore it: %w", rel, err)
		}
	}
	switch {
	case snap.info == nil:
	case snap.info.Mode().IsRegular():
		err = atomicfile.WriteFile(path, snap.data, snap.info.Mode().Perm())
	case snap.info.Mode()&fs.ModeSymlink != 0:
		err = os.Symlink(snap.link, path)
	case snap.info.IsDir():
		err = os.Mkdir(path, snap.info.Mode().Perm())
	}
	if err != nil {
		return "", fmt.Errorf("restore %s: %w", rel, err)
	}
	return rel + " " + what, nil
}

// configChange says how now differs from before ("" when it does not).
func configChange(before, now ConfigSnapshot) string {
	switch {
	case before.info == nil && now.info == nil:
		return ""
	case before.info == nil:
		return "was created"
	case now.info == nil:
		return "was deleted"
	case before.info.Mode().Type() != now.info.Mode().Type():
		return "was replaced by " + kindOrFile(now.info.Mode())
	case before.info.IsDir():
		return ""
	case before.info.Mode()&fs.ModeSymlink != 0:
		if before.link != now.link {
			return "was changed (a symbolic link to another place)"
		}
		return ""
	case !bytes.Equal(before.data, now.data):
		return "was changed"
	case !before.kept && !os.SameFile(before.info, now.info):
		return "was replaced by another file" // the same bytes, but a hard link could change them later
	}
	return ""
}

func kindOrFile(m fs.FileMode) string {
	if m.IsRegular() {
		return "a file"
	}
	return kindOf(m)
}
