package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempGlob matches the name of every temp file WriteFile makes, with
// path.Match and as a .gitignore rule.
const TempGlob = "*.tmp-*"

// TempPattern is the os.CreateTemp pattern of the temp files WriteFile
// makes for a file named name: ".<name>.tmp-*".
func TempPattern(name string) string { return "." + name + ".tmp-*" }

// maxTempTries is how many names createTemp tries before it gives up, as
// os.CreateTemp does.
const maxTempTries = 10000

// beforeRename, when set by a test, runs after the temp file is written and
// synced and before it is renamed over the target; an error it returns
// fails the write (the temp file is removed), a panic simulates a crash at
// that point (the temp file stays, as after a real one).
var beforeRename func(tmp string) error

// WriteFile replaces path with data so that a reader, or a crash, sees
// either the old content or the new, never a mix: it writes a temp file in
// the same folder (named by TempPattern), fsyncs it, renames it over path
// and fsyncs the folder. The file gets mode perm. On failure the temp file
// is removed. It is WriteFileIn on an os.Root opened on path's folder.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, true)
}

// WriteFileUnsynced is WriteFile without its two fsyncs, for files grub
// writes again from others when they are lost (a turn's prompt, the
// feature checklist). A crash of grub still leaves the old content or the
// new, never a mix (the rename is atomic); only a crash of the machine
// before the kernel writes the data back may leave the file empty or
// the rename undone.
func WriteFileUnsynced(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, false)
}

func writeFile(path string, data []byte, perm os.FileMode, sync bool) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer root.Close()
	return writeFileIn(root, name, data, perm, sync)
}

// WriteFileIn is WriteFile for the file name (relative, slash- or
// separator-separated) inside root: the temp file is created exclusively
// in name's folder, renamed over name and the folder fsynced, every step
// through root, so that no path element, and no symbolic link on the way,
// can lead the write outside the root. A link in place of name itself is
// replaced, never written through.
func WriteFileIn(root *os.Root, name string, data []byte, perm os.FileMode) error {
	return writeFileIn(root, name, data, perm, true)
}

func writeFileIn(root *os.Root, name string, data []byte, perm os.FileMode, sync bool) (err error) {
	shown := filepath.Join(root.Name(), name)
	dir, base := filepath.Split(filepath.Clean(name))
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." || strings.HasSuffix(name, "/") {
		return fmt.Errorf("write %s: %w", shown, fs.ErrInvalid)
	}
	f, tmp, err := createTemp(root, dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	if sync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("write %s: fsync: %w", shown, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	if beforeRename != nil {
		if err = beforeRename(filepath.Join(root.Name(), tmp)); err != nil {
			return fmt.Errorf("write %s: %w", shown, err)
		}
	}
	if err = root.Rename(tmp, filepath.Join(dir, base)); err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	if !sync {
		return nil
	}
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", filepath.Join(root.Name(), dir), err)
	}
	return syncDir(d)
}

// createTemp creates a new file in dir inside root, named by
// TempPattern(base), for reading and writing with mode 0600, and returns
// it with its name relative to root. It is created with O_EXCL, so it
// never opens an existing file or follows a link.
func createTemp(root *os.Root, dir, base string) (*os.File, string, error) {
	prefix, suffix, _ := strings.Cut(TempPattern(base), "*")
	for range maxTempTries {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("create a temp file in %s: %w", filepath.Join(root.Name(), dir), fs.ErrExist)
}

// SyncDir fsyncs a folder so that a rename or removal in it survives a
// crash. File systems and platforms that cannot sync a folder are not an
// error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return syncDir(d)
}

// syncDir fsyncs the open folder d and closes it.
func syncDir(d *os.File) error {
	defer d.Close()
	if err := d.Sync(); err != nil && !syncDirUnsupported(err) {
		return fmt.Errorf("fsync %s: %w", d.Name(), err)
	}
	return nil
}
