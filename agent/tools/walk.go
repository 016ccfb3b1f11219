package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// skipDir reports whether a walk from outside a folder should not enter
// it: .git, and the folders of grub's task folders the configuration names
// (Config.Skipped: the transcripts and spilled outputs, whose copies of
// earlier tool results would drown real matches). rel is relative to the
// workspace root.
func (w *workspace) skipDir(rel string) bool {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	last := parts[len(parts)-1]
	if strings.EqualFold(last, ".git") {
		return true
	}
	return len(parts) == 3 && w.tasksDir != "" && strings.EqualFold(parts[0], w.tasksDir) && slices.Contains(w.skipped, last)
}

// walkEntry is one entry found by walk.
type walkEntry struct {
	abs  string
	rel  string   // relative to the walk's root, slash-separated
	segs []string // rel split into its segments
	d    fs.DirEntry
}

// walk visits every entry under root (a resolved folder) in lexical order,
// without following symbolic links and without entering the folders
// skipDir names (they are visited; the walk may start in one). visit returns
// fs.SkipDir to skip a folder, fs.SkipAll to stop. Unreadable entries are
// passed over; a cancelled ctx ends the walk with its error.
func (w *workspace) walk(ctx context.Context, root string, visit func(e walkEntry) error) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == root {
			return err
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		verr := visit(walkEntry{abs: p, rel: rel, segs: strings.Split(rel, "/"), d: d})
		if verr == nil && d.IsDir() && w.skipDir(w.display(p)) {
			return fs.SkipDir
		}
		return verr
	})
	return err
}

// entryName is how list_files and glob show an entry: folders end in "/",
// and a symbolic link shows its target.
func entryName(e walkEntry) string {
	switch {
	case e.d.IsDir():
		return e.rel + "/"
	case e.d.Type()&fs.ModeSymlink != 0:
		if dest, err := os.Readlink(e.abs); err == nil {
			return e.rel + " -> " + dest
		}
	}
	return e.rel
}
