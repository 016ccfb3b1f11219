package gitx

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// The guard keeps a turn from planting programs that git would later run
// with the user's rights: hooks, config keys that name a program (an
// fsmonitor, a pager, an alias, a filter…), an include of a config file the
// agent controls, attributes that select a filter or a diff driver. Before
// a turn GuardGitDir copies every such file of the repository; after it,
// Check names what changed and Restore puts the copy back.
//
// Guarded, for the work tree's git directory and, for a linked work tree,
// its common directory:
//
//   - the .git entry of the work tree itself (a folder, or a file naming the
//     git directory), the commondir file (which sends git elsewhere for
//     everything; only a linked work tree has one), a linked work tree's
//     gitdir file, and HEAD, which must stay a regular file naming a
//     branch or a commit;
//   - hooks/, and the folder core.hooksPath names (repository or global
//     config), recursively;
//   - config, config.worktree (both directories), and every file they
//     include through include.path or includeIf.*.path, recursively up to
//     maxIncludeDepth, conditions ignored;
//   - info/ (attributes, exclude, sparse-checkout…), recursively, and
//     objects/info/alternates;
//   - the other linked work trees' commondir, gitdir and config.worktree,
//     and each submodule git directory under modules/ (its commondir,
//     hooks/, info/, alternates and config);
//   - every repository nested in the work tree (a .git folder or file
//     below the top, guard_nested.go): the same files of it, and a nested
//     repository the turn creates is a change, removed on Restore.
//
// What grub itself writes in the git directory (objects, refs, the index,
// logs) is not guarded.

const (
	maxIncludeDepth = 10       // git's own limit
	maxGuardBytes   = 32 << 20 // all guarded files together
	maxGuardEntries = 10000    // files and folders under the guarded folders
)

type entryKind int

const (
	kindMissing entryKind = iota
	kindFile
	kindDir
	kindLink
	kindOther   // a device, socket or pipe: never restored as such
	kindBlocked // a folder on the way to it is not a folder (a link, say)
)

// guardEntry is one guarded path as it was on disk.
type guardEntry struct {
	kind   entryKind
	mode   fs.FileMode // permission bits
	data   []byte      // a file's bytes
	target string      // a link's target; for kindBlocked, the path that is not a folder
	// stat is a file's lstat data when data was read, and trusted whether
	// an equal lstat later vouches for data (guard_stat.go).
	stat    guardStat
	trusted bool
}

func (e guardEntry) same(o guardEntry) bool {
	if e.kind != o.kind || e.target != o.target {
		return false
	}
	switch e.kind {
	case kindFile:
		return e.mode == o.mode && bytes.Equal(e.data, o.data)
	case kindDir:
		return e.mode == o.mode
	}
	return true
}

type rootKind int

const (
	rootFile   rootKind = iota // one file, compared by bytes and mode
	rootConfig                 // a git config file, compared key by key
	rootTree                   // a folder, recursively
	// rootHead is HEAD: a change is one only when it leaves HEAD other
	// than a regular file naming a branch or a commit (guard_head.go),
	// since git checkout writes it.
	rootHead
)

// guardRoot is one guarded path: a file, a config file or a folder.
type guardRoot struct {
	path string // absolute
	kind rootKind
	// base is the git directory path lies in: every folder between the two
	// must be a real folder, not a link; "" for files outside it.
	base string
	// dotGit marks the work tree's .git entry: when it was a folder, only
	// that it still is one is checked.
	dotGit bool
	// nested marks the paths of a repository nested in the work tree,
	// whose .git was there before the turn.
	nested bool
	// mustBeDir marks objects/ and refs/: only that each is still a real
	// folder is checked (grub and git write in them), and one that is not
	// cannot be restored.
	mustBeDir bool
}

// GitDirSnapshot is a copy of everything in a repository's git directory
// that can make git run a program, taken by GuardGitDir.
type GitDirSnapshot struct {
	workTree string
	roots    []guardRoot
	entries  map[string]guardEntry // by absolute path
	// nested are the .git entries below the work tree's top when the copy
	// was taken (absolute paths).
	nested map[string]bool
	// moduleHomes are the modules/ folders of the repository and of each
	// nested one, modules the submodule git directories in them, when the
	// copy was taken (guard_modules.go).
	moduleHomes []string
	modules     map[string]bool
	now         func() time.Time
	reads       int // files the last reading read (tests)
}

// GuardGitDir copies the parts of the repository's git directory that can
// make git run a program (see the list above). An error means the copy
// could not be taken: a guarded folder too big to copy, or unreadable.
func (r *Repo) GuardGitDir() (*GitDirSnapshot, error) {
	roots, err := guardRoots(r.root)
	if err != nil {
		return nil, err
	}
	nested, err := nestedRepos(r.root)
	if err != nil {
		return nil, err
	}
	roots = withNested(roots, nested)
	s := &GitDirSnapshot{workTree: r.root, roots: roots, entries: map[string]guardEntry{}, nested: map[string]bool{}, now: r.guard.clock()}
	for _, n := range nested {
		s.nested[n] = true
	}
	s.moduleHomes, s.modules = moduleHomes(r.root, nested), map[string]bool{}
	for _, m := range moduleDirs(s.moduleHomes) {
		s.modules[m] = true
	}
	r.guard.declare(declaredSubmodules(r.root))
	rd := &guardRead{budget: &guardBudget{bytes: maxGuardBytes, entries: maxGuardEntries}, prev: r.guard.previous(), now: s.now}
	for _, root := range roots {
		if err := readRoot(root, s.entries, rd); err != nil {
			return nil, err
		}
	}
	s.reads = rd.reads
	r.guard.remember(s.entries)
	return s, nil
}

// Check compares the guarded files with the copy and describes each
// change, for example ".git/hooks/pre-commit was added" or
// `.git/config: core.fsmonitor was set to "…"`. No change: nil.
func (s *GitDirSnapshot) Check() ([]string, error) {
	now, err := s.current()
	if err != nil {
		return nil, err
	}
	var changes []string
	for _, root := range s.roots {
		changes = append(changes, s.describeRoot(root, now)...)
	}
	added, err := s.addedNested()
	if err != nil {
		return nil, err
	}
	for _, n := range added {
		changes = append(changes, fmt.Sprintf("%s was created: a repository nested in the work tree, whose hooks and config git would run; it is removed", s.label(n)))
	}
	for _, m := range s.addedModules() {
		changes = append(changes, fmt.Sprintf("%s was created: a submodule's git directory, whose hooks and config git would run when the submodule is checked out; it is removed", s.label(m)))
	}
	return changes, nil
}

// Restore puts every guarded path that changed back as it was copied:
// added files are removed, changed or removed ones written again with
// their old mode, links put back. It never writes through a link. A .git
// folder that was removed or replaced cannot be restored: that is an
// error.
func (s *GitDirSnapshot) Restore() error {
	now, err := s.current()
	if err != nil {
		return err
	}
	for _, root := range s.roots {
		if s.rootSame(root, now) {
			continue
		}
		if (root.dotGit || root.mustBeDir) && root.nested && s.entries[root.path].kind == kindDir {
			continue // a nested repository removed: named by Check, nothing planted
		}
		if (root.dotGit || root.mustBeDir) && s.entries[root.path].kind == kindDir {
			return &GitDirGoneError{Path: s.label(root.path)}
		}
		if err := s.restoreRoot(root, now); err != nil {
			return fmt.Errorf("restore %s: %w", s.label(root.path), err)
		}
	}
	added, err := s.addedNested()
	if err != nil {
		return err
	}
	for _, n := range added {
		if err := removePlanted(n); err != nil {
			return fmt.Errorf("remove the nested repository %s: %w", s.label(n), err)
		}
	}
	for _, m := range s.addedModules() {
		if err := removePlanted(m); err != nil {
			return fmt.Errorf("remove the submodule git directory %s: %w", s.label(m), err)
		}
	}
	return nil
}

// GitDirGoneError is the error of Restore, and of GuardGitDir, when the
// work tree's git directory, or its objects/ or refs/ folder, was removed
// or replaced: objects and refs are not in the copy.
type GitDirGoneError struct{ Path string }

func (e *GitDirGoneError) Error() string {
	return fmt.Sprintf("%s was removed or replaced; grub cannot restore it (git's objects and refs are not in grub's copy)", e.Path)
}

// GitDirBroken marks the error for callers that do not import gitx (the
// controller asks errors.As for an error with this method).
func (e *GitDirGoneError) GitDirBroken() {}

// current reads the guarded paths as they are now; a file whose lstat
// data is the same as when the copy read it is not read again (see
// guard_stat.go). The budget does not apply: the copy is already taken,
// and a turn that fills a hooks folder must still be caught.
func (s *GitDirSnapshot) current() (map[string]guardEntry, error) {
	now := map[string]guardEntry{}
	rd := &guardRead{budget: &guardBudget{bytes: -1}, prev: s.entries, now: s.now}
	if rd.now == nil {
		rd.now = time.Now
	}
	for _, root := range s.roots {
		if err := readRoot(root, now, rd); err != nil {
			return nil, err
		}
	}
	s.reads = rd.reads
	return now, nil
}

// under lists the recorded and current paths at or below root, sorted so
// that a folder comes before what it holds.
func under(root guardRoot, maps ...map[string]guardEntry) []string {
	seen := map[string]bool{}
	var paths []string
	for _, m := range maps {
		for p := range m {
			if !seen[p] && (p == root.path || (root.kind == rootTree && strings.HasPrefix(p, root.path+string(filepath.Separator)))) {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	return paths
}

func (s *GitDirSnapshot) rootSame(root guardRoot, now map[string]guardEntry) bool {
	if root.kind == rootHead {
		return headSame(entryIn(s.entries, root.path), entryIn(now, root.path))
	}
	for _, p := range under(root, s.entries, now) {
		if !entryIn(s.entries, p).same(entryIn(now, p)) {
			return false
		}
	}
	return true
}

// entryIn is the entry at p, missing when absent.
func entryIn(m map[string]guardEntry, p string) guardEntry {
	return m[p] // the zero entry is kindMissing
}

// label names a path for a message: relative to the work tree when inside
// it (".git/hooks/pre-commit"), absolute otherwise.
func (s *GitDirSnapshot) label(p string) string {
	if rel, err := filepath.Rel(s.workTree, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}

// guardBudget bounds what GuardGitDir copies; bytes < 0 means no bound.
type guardBudget struct{ bytes, entries int }

func (b *guardBudget) take(n int, path string) error {
	if b.bytes < 0 {
		return nil
	}
	b.bytes -= n
	b.entries--
	if b.bytes < 0 || b.entries < 0 {
		return fmt.Errorf("guard the git directory: %s and the other guarded files hold more than %d MiB or %d entries; grub cannot keep a copy to restore", path, maxGuardBytes>>20, maxGuardEntries)
	}
	return nil
}

// readRoot adds the entries of root to m.
func readRoot(root guardRoot, m map[string]guardEntry, rd *guardRead) error {
	if blocked := blockedOnTheWay(root.base, root.path); blocked != "" {
		m[root.path] = guardEntry{kind: kindBlocked, target: blocked}
		return nil
	}
	e, err := readEntry(root.path, rd)
	if err != nil {
		return err
	}
	if (root.dotGit || root.mustBeDir) && e.kind == kindDir {
		e.mode = 0 // only that it is a folder counts
	}
	m[root.path] = e
	if root.kind != rootTree || e.kind != kindDir {
		return nil
	}
	return filepath.WalkDir(root.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("guard the git directory: %w", err)
		}
		if p == root.path {
			return nil
		}
		e, err := readEntry(p, rd)
		if err != nil {
			return err
		}
		m[p] = e
		return nil
	})
}

// readEntry reads one path without following a link; a file whose
// earlier reading rd may reuse is not read again.
func readEntry(p string, rd *guardRead) (guardEntry, error) {
	budget := rd.budget
	start := rd.now()
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return guardEntry{}, nil
	}
	if err != nil {
		return guardEntry{}, fmt.Errorf("guard the git directory: %w", err)
	}
	mode := fi.Mode().Perm()
	switch t := fi.Mode().Type(); {
	case t == 0:
		if err := budget.take(int(fi.Size()), p); err != nil {
			return guardEntry{}, err
		}
		if e, ok := rd.reuse(p, fi); ok {
			return e, nil
		}
		rd.reads++
		data, err := os.ReadFile(p)
		if err != nil {
			return guardEntry{}, fmt.Errorf("guard the git directory: %w", err)
		}
		st, trusted := trustedStat(fi, start)
		return guardEntry{kind: kindFile, mode: mode, data: data, stat: st, trusted: trusted}, nil
	case t == fs.ModeDir:
		if err := budget.take(0, p); err != nil {
			return guardEntry{}, err
		}
		return guardEntry{kind: kindDir, mode: mode}, nil
	case t == fs.ModeSymlink:
		target, err := os.Readlink(p)
		if err != nil {
			return guardEntry{}, fmt.Errorf("guard the git directory: %w", err)
		}
		return guardEntry{kind: kindLink, target: target}, nil
	default:
		return guardEntry{kind: kindOther, mode: mode}, nil
	}
}

// blockedOnTheWay names the first component between base and p (both
// excluded) that is not a real folder (a link or a file), or "".
func blockedOnTheWay(base, p string) string {
	if base == "" {
		return ""
	}
	rel, err := filepath.Rel(base, filepath.Dir(p))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	cur := base
	for _, comp := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, comp)
		fi, err := os.Lstat(cur)
		if err != nil {
			return "" // missing: the path is simply missing
		}
		if !fi.IsDir() {
			return cur
		}
	}
	return ""
}

// restoreRoot makes root's paths on disk what the copy holds.
func (s *GitDirSnapshot) restoreRoot(root guardRoot, now map[string]guardEntry) error {
	want := s.entries[root.path]
	if want.kind == kindBlocked {
		// It was behind a link or a file before the turn: nothing of ours
		// to put back there.
		return nil
	}
	if entryIn(now, root.path).kind == kindBlocked {
		if err := unblock(root.base, root.path); err != nil {
			return err
		}
		now = map[string]guardEntry{}
	}
	paths := under(root, s.entries, now)
	// Remove what should not be there, deepest first.
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		have, was := entryIn(now, p), s.entries[p]
		if have.kind == kindMissing {
			continue
		}
		if was.kind == kindMissing || have.kind != was.kind || (was.kind == kindLink && have.target != was.target) {
			if err := removePlanted(p); err != nil {
				return err
			}
			now[p] = guardEntry{}
		}
	}
	// Put back what should be there, folders before their contents.
	for _, p := range paths {
		have, was := entryIn(now, p), s.entries[p]
		if was.same(have) {
			continue
		}
		if was.kind == kindMissing {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		switch was.kind {
		case kindDir:
			if have.kind == kindMissing {
				if err := os.Mkdir(p, was.mode); err != nil {
					return err
				}
			}
			if err := os.Chmod(p, was.mode); err != nil {
				return err
			}
		case kindFile:
			if err := writeRestored(p, was.data, was.mode); err != nil {
				return err
			}
		case kindLink:
			if err := os.Symlink(was.target, p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s was a special file and cannot be restored", s.label(p))
		}
	}
	return nil
}

// unblock replaces every component between base and p that is not a real
// folder with an empty folder, so that restoring p writes where it was.
func unblock(base, p string) error {
	for {
		blocked := blockedOnTheWay(base, p)
		if blocked == "" {
			return nil
		}
		if err := os.Remove(blocked); err != nil {
			return err
		}
		if err := os.Mkdir(blocked, 0o755); err != nil {
			return err
		}
	}
}

// writeRestored writes a file with grub's one atomic writer
// (internal/atomicfile: a temp file in the same folder, fsync, rename,
// folder fsync), so it replaces whatever is at p (a link included)
// without following it, and a crash leaves the old or the new file.
func writeRestored(p string, data []byte, mode fs.FileMode) error {
	return atomicfile.WriteFile(p, data, mode)
}
