package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// TempGlob matches the name of every temp file WriteFile makes, with
// path.Match and as a .gitignore rule.
const TempGlob = "*.tmp-*"

// TempPattern is the os.CreateTemp pattern of the temp files WriteFile
// makes for a file named name: ".<name>.tmp-*".
func TempPattern(name string) string { return "." + name + ".tmp-*" }

// beforeRename, when set by a test, runs after the temp file is written and
// synced and before it is renamed over the target; an error it returns
// fails the write (the temp file is removed), a panic simulates a crash at
// that point (the temp file stays, as after a real one).
var beforeRename func(tmp string) error

// WriteFile replaces path with data so that a reader, or a crash, sees
// either the old content or the new, never a mix: it writes a temp file in
// the same folder (named by TempPattern), fsyncs it, renames it over path
// and fsyncs the folder. The file gets mode perm. On failure the temp file
// is removed.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPattern(name))
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
	return SyncDir(dir)
}

// SyncDir fsyncs a folder so that a rename or removal in it survives a
// crash. File systems and platforms that cannot sync a folder are not an
// error.
func SyncDir(dir string) error {
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
