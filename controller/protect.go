package controller

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// Protected files (--protect GLOB, state.json's limits.protect): a file
// of the workspace matching one of the patterns that exists when a turn
// starts may not be changed, deleted, renamed, replaced (by a link, a
// folder, a hard link to another file), given another name (a hard link,
// through which a later turn could change it) or have its mode changed by
// the turn; new files are fine. snapshotProtected keeps each one's bytes
// at the turn's start; checkProtected, after the agent and again after
// the verification, puts back what changed and fails the turn naming the
// files.

// protectedSet is the protected files at the turn's start, by path
// relative to the workspace (slash-separated).
type protectedSet map[string]harness.ProtectedEntry

// snapshotProtected walks the workspace (not .git, not .grub) for the
// files the task's patterns match, without following links.
func (c *Controller) snapshotProtected() (protectedSet, error) {
	patterns := c.st.Limits.Protect
	if len(patterns) == 0 {
		return nil, nil
	}
	root := c.store.Root
	set := protectedSet{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // an unreadable folder holds nothing grub can keep
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || rel == harness.GrubDirName) {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.ContainsFunc(patterns, func(pat string) bool { return matchProtect(pat, rel) }) {
			return nil
		}
		f, err := readProtected(rel, p)
		if err != nil {
			return err
		}
		set[rel] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("keep the protected files: %w", err)
	}
	return set, nil
}

func readProtected(rel, p string) (harness.ProtectedEntry, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return harness.ProtectedEntry{}, err
	}
	f := harness.ProtectedEntry{Path: rel, Mode: fi.Mode()}
	f.Dev, f.Ino, f.Links = fileID(fi)
	switch {
	case fi.Mode().IsRegular():
		f.Data, err = os.ReadFile(p)
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Target, err = os.Readlink(p)
	}
	return f, err
}

// modeBits are the bits of a file's mode a turn may not change.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// protectedChange says what happened to the protected file rel under
// root, "" when nothing.
func protectedChange(root, rel string, before harness.ProtectedEntry) (string, error) {
	if dir := linkedFolder(root, rel); dir != "" {
		return "is now reached through " + dir + ", a folder replaced by a link or a file", nil
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	now, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "was deleted or renamed", nil
	case err != nil:
		return "", err
	case now.Mode().Type() != before.Mode.Type():
		return "was replaced by " + fileKind(now.Mode()), nil
	case now.Mode()&modeBits != before.Mode&modeBits:
		return fmt.Sprintf("had its mode changed from %v to %v", before.Mode&modeBits, now.Mode()&modeBits), nil
	}
	dev, ino, nlink := fileID(now)
	sameInode := dev == before.Dev && ino == before.Ino
	switch {
	case !sameInode && nlink > 1:
		return "was replaced by a hard link to another file", nil
	case sameInode && nlink > before.Links:
		return "was given another name (a hard link)", nil
	}
	if now.Mode().IsRegular() {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		if string(data) != string(before.Data) {
			return "was changed", nil
		}
		return "", nil
	}
	if now.Mode()&fs.ModeSymlink != 0 {
		if t, err := os.Readlink(p); err != nil || t != before.Target {
			return "was changed (the link points elsewhere)", nil
		}
	}
	return "", nil
}

// linkedFolder is the first folder on rel's way under root that is not
// a real folder any more (a link to a copy elsewhere would hide the file
// from the next turn's walk), "" when there is none.
func linkedFolder(root, rel string) string {
	parts := strings.Split(rel, "/")
	dir := root
	for i, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err == nil && !fi.IsDir() {
			return strings.Join(parts[:i+1], "/")
		}
		if err != nil {
			return "" // gone: the file is gone too
		}
	}
	return ""
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// keepProtected takes the protected files as the turn starts and keeps
// them in the task's private folder (harness.KeepProtected) for a run
// that recovers the turn after a crash.
func (c *Controller) keepProtected() (protectedSet, error) {
	set, err := c.snapshotProtected()
	if err != nil || set == nil {
		return set, err
	}
	entries := make([]harness.ProtectedEntry, 0, len(set))
	for _, e := range set {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b harness.ProtectedEntry) int { return strings.Compare(a.Path, b.Path) })
	return set, c.store.KeepProtected(c.st.ID, c.st.CurrentIteration, entries)
}

// recoverProtected checks, for a turn a crash cut short, the protected
// files kept when it started, as the end of the turn would have.
func (c *Controller) recoverProtected(out *outcome) error {
	entries, ok, err := c.store.LoadProtected(c.st.ID, c.st.CurrentIteration)
	if err != nil || !ok {
		return err
	}
	set := protectedSet{}
	for _, e := range entries {
		set[e.Path] = e
	}
	_, err = c.checkProtected(out, set, "during the turn")
	return err
}

// checkProtected puts back each protected file the turn changed and
// fails the turn naming them; who says what ran. It returns whether any
// changed.
func (c *Controller) checkProtected(out *outcome, set protectedSet, who string) (bool, error) {
	var what []string
	names := make([]string, 0, len(set))
	for rel := range set {
		names = append(names, rel)
	}
	slices.Sort(names)
	for _, rel := range names {
		change, err := protectedChange(c.store.Root, rel, set[rel])
		if err != nil {
			return false, fmt.Errorf("check the protected file %s: %w", rel, err)
		}
		if change == "" {
			continue
		}
		if err := restoreProtected(c.store.Root, rel, set[rel]); err != nil {
			return false, fmt.Errorf("restore the protected file %s: %w", rel, err)
		}
		what = append(what, rel+" "+change)
	}
	if len(what) == 0 {
		return false, nil
	}
	out.failAs(harness.FindingIllegalEdit, "illegal edit: protected files (--protect %s) changed %s: %s; grub put back what they held when the turn started: make the checks pass without changing them",
		strings.Join(c.st.Limits.Protect, " "), who, strings.Join(what, "; "))
	return true, nil
}

// checkProtectedAfterVerify is checkProtected after the referee ran
// init.sh and the verify command: a change then also undoes what the
// referee accepted.
func (c *Controller) checkProtectedAfterVerify(out *outcome, set protectedSet, base *featurelist.List, phase harness.Phase) error {
	changed, err := c.checkProtected(out, set, "by init.sh or a verify command, run by grub to verify the turn")
	if err != nil || !changed {
		return err
	}
	c.st.FeatureListBaseline, c.st.Phase = base, phase
	out.flipped, out.complete = "", false
	return c.restoreIfChanged()
}

// restoreProtected writes f back at rel under root: whatever is there is
// removed (a link itself, never its target), and each folder on the way
// made a real folder again, so that nothing is written through a link the
// turn put in place of one.
func restoreProtected(root, rel string, f harness.ProtectedEntry) error {
	dir := root
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := os.Remove(dir); err != nil {
				return err
			}
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	if f.Mode&fs.ModeSymlink != 0 {
		return os.Symlink(f.Target, p)
	}
	fd, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode.Perm())
	if err != nil {
		return err
	}
	if _, err := fd.Write(f.Data); err != nil {
		fd.Close()
		return err
	}
	if err := fd.Chmod(f.Mode & modeBits); err != nil {
		fd.Close()
		return err
	}
	return fd.Close()
}
