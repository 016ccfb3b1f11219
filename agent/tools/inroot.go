package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// The file tools check a path with resolve and then use it through an
// os.Root, never by name: between the two the agent's shell may swap a
// folder on the way for a symbolic link (a process it starts in the
// background outlives its call). os.Root keeps every use inside the root
// whatever is swapped; on top of it the folders are entered one element at
// a time and each must be, when opened, the real folder resolve saw (no
// link, even one that stays inside), so that a link swapped in cannot
// redirect a write to a protected harness file or through grub's own
// folders either.

// swappedError reports a path element found to be a symbolic link, or
// another file than the one opened, after resolve checked the path: it
// changed while the tool was using it.
type swappedError struct{ name string }

func (e *swappedError) Error() string {
	return e.name + " was replaced while the path was in use"
}

// openParent opens the folder holding tg as an os.Root (see openFolder)
// and returns it with tg's last element. create makes missing folders on
// the way. Errors are model mistakes, reported in the words of tool's
// action ("read", "write").
func openParent(tg target, create bool, action string) (*os.Root, string, error) {
	dir, name := path.Split(tg.local)
	if dir == "" {
		dir = "."
	}
	root, err := openFolder(tg.base, path.Clean(dir), create)
	switch {
	case err == nil:
		return root, name, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", mistakef("%s does not exist; find files with glob or list_files", tg.rel)
	case create:
		return nil, "", inUseMistake(tg, err, fmt.Sprintf("cannot create the folder of %s", tg.rel))
	}
	return nil, "", inUseMistake(tg, err, fmt.Sprintf("cannot %s %s", action, tg.rel))
}

// inUseMistake is the model mistake for err, met using tg: a path swapped
// since it was checked is refused as such, anything else prefixed with
// what failed.
func inUseMistake(tg target, err error, what string) error {
	if se, ok := errors.AsType[*swappedError](err); ok {
		name := se.name
		if r, ok := within(tg.base, filepath.FromSlash(name)); ok && !filepath.IsAbs(tg.rel) {
			name = filepath.ToSlash(r)
		}
		return mistakef("refused: %s: %s was replaced while the path was in use (a symbolic link or another file now stands there); tools never follow a link put in place of a path they checked", tg.rel, name)
	}
	return mistakef("%s: %v", what, err)
}

// openFolder opens the folder local (slash-separated, below base) as an
// os.Root, entering one element at a time: each must be a real folder, not
// a symbolic link, and the very folder that was opened (enter). With create
// a missing folder is made.
func openFolder(base, local string, create bool) (*os.Root, error) {
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	if local == "." || local == "" {
		return root, nil
	}
	for _, name := range strings.Split(local, "/") {
		sub, err := enter(root, name, create)
		root.Close()
		if err != nil {
			return nil, err
		}
		root = sub
	}
	return root, nil
}

// enter opens the folder name (one element) of parent as an os.Root,
// making it first when create is set and it is missing. It refuses, with a
// swappedError, a name that is a symbolic link or that, checked after the
// opening, is not the folder opened: a link swapped in and out again.
func enter(parent *os.Root, name string, create bool) (*os.Root, error) {
	sub, err := parent.OpenRoot(name)
	if create && errors.Is(err, fs.ErrNotExist) {
		if err := parent.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		sub, err = parent.OpenRoot(name)
	}
	if err != nil {
		if swappedAt(parent, name, err) {
			return nil, &swappedError{name: displayIn(parent, name)}
		}
		return nil, err
	}
	fi, err := sub.Stat(".")
	if err == nil {
		err = sameEntry(parent, name, fi)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// swappedAt reports whether err, from opening the folder name of parent,
// comes from a symbolic link standing there: name is a link now, the
// opening met one (os.Root follows a link only inside the folder it is
// opened in, here parent), or name is a real folder now though opening it
// failed for another reason than permissions, so it was something else a
// moment ago.
func swappedAt(parent *os.Root, name string, err error) bool {
	if errors.Is(err, syscall.ELOOP) {
		return true
	}
	fi, lerr := parent.Lstat(name)
	if lerr != nil {
		return false
	}
	return fi.Mode()&fs.ModeSymlink != 0 || (fi.IsDir() && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrNotExist))
}

// sameEntry checks that name in dir is now no symbolic link and is the
// file opened, whose information is opened.
func sameEntry(dir *os.Root, name string, opened fs.FileInfo) error {
	fi, err := dir.Lstat(name)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !os.SameFile(fi, opened) {
		return &swappedError{name: displayIn(dir, name)}
	}
	return nil
}

// displayIn names name in dir for a message: its path as dir was opened.
func displayIn(dir *os.Root, name string) string {
	return path.Join(strings.ReplaceAll(dir.Name(), "\\", "/"), name)
}

// openRegular opens the file at tg for reading through an os.Root (see
// openParent and openRegularIn).
func openRegular(tg target, tool string) (*os.File, fs.FileInfo, error) {
	dir, name, err := openParent(tg, false, "read")
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	return openRegularIn(dir, name, tg, tool)
}

// openRegularIn opens name in dir, the file at tg, for reading, refusing
// with a model mistake what does not exist, a folder, anything that is not
// a plain file (a FIFO would block the read) and a file swapped since it
// was checked. It returns the open file's information.
func openRegularIn(dir *os.Root, name string, tg target, tool string) (*os.File, fs.FileInfo, error) {
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, mistakef("%s does not exist; find files with glob or list_files", tg.rel)
	case err != nil:
		return nil, nil, mistakef("cannot read %s: %v", tg.rel, err)
	case fi.IsDir():
		return nil, nil, mistakef("%s is a folder, not a file; list it with list_files", tg.rel)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, nil, inUseMistake(tg, &swappedError{name: tg.rel}, "")
	case !fi.Mode().IsRegular():
		return nil, nil, mistakef("%s is not a regular file (%s); %s works on regular files only", tg.rel, fi.Mode().Type(), tool)
	}
	f, err := dir.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, nil, inUseMistake(tg, err, "cannot read "+tg.rel)
	}
	ofi, err := f.Stat()
	if err == nil && (!ofi.Mode().IsRegular() || !os.SameFile(fi, ofi)) {
		err = &swappedError{name: tg.rel}
	}
	if err != nil {
		f.Close()
		return nil, nil, inUseMistake(tg, err, "cannot read "+tg.rel)
	}
	return f, ofi, nil
}
