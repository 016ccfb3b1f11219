package harness

import (
	"fmt"
	"os"
	"path/filepath"
)

// beforeRename, when set by a test, runs after the temp file is written and
// synced and before it is renamed over the target; an error it returns
// simulates a crash at that point.
var beforeRename func(tmp string) error

// WriteFileAtomic replaces path with data so that a reader, or a crash, sees
// either the old content or the new, never a mix: it writes a temp file in
// the same folder, fsyncs it, renames it over path and fsyncs the folder. The
// temp file is named ".<name>.tmp-*"; on failure it is removed.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if beforeRename != nil {
		if err = beforeRename(tmp); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir fsyncs a folder so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !syncDirUnsupported(err) {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
