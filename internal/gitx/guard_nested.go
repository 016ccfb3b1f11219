package gitx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A repository nested in the work tree (a .git folder or file below the
// top) has hooks and config of its own, and git runs them: `git status`
// in the outer repository looks into a submodule's work tree, and a user
// who enters the folder runs its fsmonitor. The guard treats one that
// was there before the turn like the top repository (its files are
// guarded), and one the turn created as a change: Check names it and
// Restore removes it. The turn commit never takes a gitlink (a nested
// repository's commit recorded in the index) unless the user declared
// the submodule in .gitmodules before the turn (declaredSubmodules).

// maxNested bounds the nested repositories whose files are guarded; more
// are still found, and new ones still removed.
const maxNested = 100

// nestedRepos lists the .git entries below the top of the work tree at
// root (absolute paths, sorted), of any kind: a folder, a file naming a
// git directory, a link. It does not enter git directories, nor follow
// links.
func nestedRepos(root string) ([]string, error) {
	top := filepath.Join(root, ".git")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != root && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)) {
				return nil // gone meanwhile, or unreadable: git cannot use it either
			}
			return fmt.Errorf("look for nested repositories: %w", err)
		}
		if d.Name() != ".git" || p == root {
			return nil
		}
		if p != top {
			out = append(out, p)
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// withNested adds to roots the guarded files of each nested repository
// (as guardRoots lists them for its own work tree), up to maxNested; a
// nested .git that names no git directory is guarded as itself only.
func withNested(roots []guardRoot, nested []string) []guardRoot {
	for i, dotGit := range nested {
		if i >= maxNested {
			break
		}
		sub, err := guardRoots(filepath.Dir(dotGit))
		if err != nil {
			sub = []guardRoot{{path: dotGit, kind: rootFile, dotGit: true}}
		}
		for _, r := range sub {
			if containsRoot(roots, r.path) {
				continue
			}
			r.nested = true
			roots = append(roots, r)
		}
	}
	return roots
}

// addedNested lists the nested repositories that are in the work tree now
// and were not when the copy was taken.
func (s *GitDirSnapshot) addedNested() ([]string, error) {
	now, err := nestedRepos(s.workTree)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, n := range now {
		if !s.nested[n] {
			added = append(added, n)
		}
	}
	return added, nil
}

// declaredSubmodules are the paths (slash-separated, from the work tree's
// top) that .gitmodules at root declares as submodules; nil when there
// is no such file or it does not parse.
func declaredSubmodules(root string) map[string]bool {
	cfg, err := parseConfigFile(filepath.Join(root, ".gitmodules"))
	if err != nil || cfg == nil {
		return map[string]bool{}
	}
	out := map[string]bool{}
	for _, s := range cfg.Sections {
		if !s.IsName("submodule") {
			continue
		}
		for _, sub := range s.Subsections {
			for _, p := range sub.Options.GetAll("path") {
				p = strings.Trim(path.Clean(filepath.ToSlash(p)), "/")
				if p != "" && p != "." && !strings.HasPrefix(p, "../") {
					out[p] = true
				}
			}
		}
	}
	return out
}

// declare remembers the submodules declared when a guard copy was taken:
// the next commit takes gitlinks for those paths only.
func (m *guardMemo) declare(paths map[string]bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.declared = paths
}

// submodules are the paths a commit may keep a gitlink for: those
// declared when the last guard copy was taken, or, when none was, those
// .gitmodules at root declares now.
func (m *guardMemo) submodules(root string) map[string]bool {
	if m != nil {
		m.mu.Lock()
		d := m.declared
		m.mu.Unlock()
		if d != nil {
			return d
		}
	}
	return declaredSubmodules(root)
}

// removePlanted removes p and what it holds, as os.RemoveAll does; when
// that fails (the turn made p's folder, or folders in p, read-only), it
// makes them writable by their owner, never following a link, and tries
// again.
func removePlanted(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	if fi, lerr := os.Lstat(filepath.Dir(p)); lerr == nil && fi.IsDir() {
		_ = os.Chmod(filepath.Dir(p), fi.Mode().Perm()|0o700)
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
