package gitx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Head is where HEAD is: the branch it names (a full ref name,
// "refs/heads/main"; "" when HEAD holds a commit id: detached) and the
// commit it resolves to ("" on a branch that does not exist).
type Head struct {
	Branch string
	Commit string
	// Indirect is set when the branch HEAD names is itself a symbolic
	// ref (to another branch): git follows it, so commits go elsewhere.
	Indirect bool
}

// Head reads HEAD without following more than one level, so that a
// symbolic branch and a missing one are seen as what they are.
func (r *Repo) Head() (Head, error) {
	g, _, err := r.open()
	if err != nil {
		return Head{}, err
	}
	return readHead(g)
}

func readHead(g *git.Repository) (Head, error) {
	head, err := g.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return Head{}, fmt.Errorf("read HEAD: %w", err)
	}
	if head.Type() == plumbing.HashReference {
		return Head{Commit: head.Hash().String()}, nil
	}
	h := Head{Branch: head.Target().String()}
	ref, err := g.Storer.Reference(head.Target())
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return h, nil
	}
	if err != nil {
		return Head{}, fmt.Errorf("read %s: %w", head.Target(), err)
	}
	if ref.Type() != plumbing.HashReference {
		h.Indirect = true
		if res, err := g.Reference(head.Target(), true); err == nil {
			h.Commit = res.Hash().String()
		}
		return h, nil
	}
	h.Commit = ref.Hash().String()
	return h, nil
}

// CheckAppend says how HEAD departs from a history that may only grow:
// it must be on branch (a full ref name; "" accepts a detached HEAD too),
// which must be a plain ref, and its commit must be commit or descend
// from it. problem is "" when all holds; head is what HEAD was.
func (r *Repo) CheckAppend(branch, commit string) (problem string, head Head, err error) {
	g, _, err := r.open()
	if err != nil {
		return "", Head{}, err
	}
	head, err = readHead(g)
	if err != nil {
		return "", head, err
	}
	short := strings.TrimPrefix(branch, "refs/heads/")
	switch {
	case branch != "" && head.Branch == "":
		return fmt.Sprintf("HEAD was detached at %s, off the branch %s", abbrev(head.Commit), short), head, nil
	case branch != "" && head.Branch != branch:
		where := fmt.Sprintf("HEAD is on %s instead of %s", strings.TrimPrefix(head.Branch, "refs/heads/"), short)
		if _, err := g.Storer.Reference(plumbing.ReferenceName(branch)); errors.Is(err, plumbing.ErrReferenceNotFound) {
			where += fmt.Sprintf(", and %s was deleted (or renamed)", short)
		}
		return where, head, nil
	case head.Indirect:
		return fmt.Sprintf("the branch %s was made a symbolic ref to another branch", short), head, nil
	case head.Commit == "":
		return fmt.Sprintf("the branch %s was deleted", short), head, nil
	}
	if head.Commit == commit {
		return "", head, nil
	}
	ok, err := descends(g, plumbing.NewHash(head.Commit), plumbing.NewHash(commit))
	if err != nil {
		return "", head, err
	}
	if !ok {
		return fmt.Sprintf("%s (now %s) no longer descends from grub's last turn commit %s: history was rewritten (reset, amend, rebase or update-ref)",
			orDetached(short), abbrev(head.Commit), abbrev(commit)), head, nil
	}
	return "", head, nil
}

func orDetached(branch string) string {
	if branch == "" {
		return "HEAD"
	}
	return "the branch " + branch
}

func abbrev(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// descends reports whether c is a or has a among its ancestors.
func descends(g *git.Repository, c, a plumbing.Hash) (bool, error) {
	if c == a {
		return true, nil
	}
	cc, err := g.CommitObject(c)
	if err != nil {
		return false, fmt.Errorf("read commit %s: %w", c, err)
	}
	if _, err := g.CommitObject(a); err != nil {
		return false, nil // the commit grub recorded is gone: not an ancestor
	}
	// Breadth first from c. A parent the repository does not hold (a
	// shallow clone's boundary: CI checkouts are often shallow) ends its
	// line; go-git's IsAncestor fails there with "object not found".
	seen := map[plumbing.Hash]bool{c: true}
	queue := cc.ParentHashes
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if h == a {
			return true, nil
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		p, err := g.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("read commit %s: %w", h, err)
		}
		queue = append(queue, p.ParentHashes...)
	}
	return false, nil
}

// RestoreHistory puts branch back at commit and HEAD on it (detached at
// commit when branch is ""), and the index and the tracked files of the
// work tree as commit has them; the paths of keep (workspace-relative)
// are left as they are on disk. Before anything moves, the commits HEAD
// and the branch named are kept reachable under keepRef (keepRef-2 ... when
// it names another commit already); kept lists the refs written. The
// files and the index are restored before the refs move, so a crash in
// between leaves the departure for the next check to find again.
func (r *Repo) RestoreHistory(ctx context.Context, branch, commit, keepRef string, keep []string) (kept []string, err error) {
	g, st, err := r.open()
	if err != nil {
		return nil, err
	}
	head, err := readHead(g)
	if err != nil {
		return nil, err
	}
	target := plumbing.NewHash(commit)
	kept, err = keepDeparted(g, st, head, branch, target, keepRef)
	if err != nil {
		return kept, err
	}
	c, err := g.CommitObject(target)
	if err != nil {
		return kept, fmt.Errorf("read grub's last turn commit %s: %w", commit, err)
	}
	if err := r.restoreTree(ctx, st, c, keep); err != nil {
		return kept, err
	}
	if branch == "" {
		return kept, writeRef(st, plumbing.HEAD, target)
	}
	if err := writeRef(st, plumbing.ReferenceName(branch), target); err != nil {
		return kept, fmt.Errorf("move %s back to %s: %w", branch, abbrev(commit), err)
	}
	if head.Branch != branch {
		if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(branch))); err != nil {
			return kept, fmt.Errorf("put HEAD back on %s: %w", branch, err)
		}
	}
	return kept, nil
}

// keepDeparted writes keepRef for HEAD's commit and, when it differs,
// keepRef-branch for the branch's, unless they are target itself.
func keepDeparted(g *git.Repository, st *filesystem.Storage, head Head, branch string, target plumbing.Hash, keepRef string) ([]string, error) {
	var tips []plumbing.Hash
	if head.Commit != "" {
		tips = append(tips, plumbing.NewHash(head.Commit))
	}
	if branch != "" {
		if ref, err := g.Reference(plumbing.ReferenceName(branch), true); err == nil {
			tips = append(tips, ref.Hash())
		}
	}
	var kept []string
	for _, tip := range tips {
		if tip == target || tip.IsZero() {
			continue
		}
		name, done, err := freeRef(st, keepRef, tip)
		if err != nil {
			return kept, err
		}
		if !done {
			if err := writeRef(st, name, tip); err != nil {
				return kept, fmt.Errorf("keep %s as %s: %w", abbrev(tip.String()), name, err)
			}
		}
		if len(kept) == 0 || kept[len(kept)-1] != name.String() {
			kept = append(kept, name.String())
		}
	}
	return kept, nil
}

// freeRef is keepRef, or keepRef-N, that does not name another commit;
// done when it names tip already.
func freeRef(st *filesystem.Storage, keepRef string, tip plumbing.Hash) (plumbing.ReferenceName, bool, error) {
	for n := 1; n < 1000; n++ {
		name := plumbing.ReferenceName(keepRef)
		if n > 1 {
			name = plumbing.ReferenceName(fmt.Sprintf("%s-%d", keepRef, n))
		}
		ref, err := st.Reference(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return name, false, nil
		}
		if err != nil {
			return "", false, err
		}
		if ref.Type() == plumbing.HashReference && ref.Hash() == tip {
			return name, true, nil
		}
	}
	return "", false, fmt.Errorf("too many refs named %s-N", keepRef)
}

// restoreTree writes every file of c's tree that differs on disk, removes
// the files the index tracks that c does not hold, and writes the index
// as c's tree, under .git/index.lock.
func (r *Repo) restoreTree(ctx context.Context, st *filesystem.Storage, c *object.Commit, keep []string) error {
	lock, err := lockIndex(ctx, st)
	if err != nil {
		return err
	}
	defer lock.release()
	skip := map[string]bool{}
	for _, k := range keep {
		skip[pathJoin(r.prefix, k)] = true
	}
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("read the tree of %s: %w", c.Hash, err)
	}
	next := &index.Index{Version: 2}
	inTree := map[string]bool{}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read the tree of %s: %w", c.Hash, err)
		}
		if e.Mode == filemode.Dir {
			continue
		}
		inTree[name] = true
		ie := &index.Entry{Name: name, Hash: e.Hash, Mode: e.Mode}
		if e.Mode != filemode.Submodule && !skip[name] {
			if err := r.restoreFile(st, name, &e); err != nil {
				return err
			}
		}
		if fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(name))); err == nil && e.Mode != filemode.Submodule {
			ie.Size, ie.ModifiedAt = uint32(fi.Size()), fi.ModTime()
		}
		next.Entries = append(next.Entries, ie)
	}
	if old, err := st.Index(); err == nil {
		for _, e := range old.Entries {
			if !inTree[e.Name] && !skip[e.Name] && e.Mode != filemode.Submodule {
				r.removeTracked(e.Name)
			}
		}
	}
	sort.Slice(next.Entries, func(i, j int) bool { return next.Entries[i].Name < next.Entries[j].Name })
	return lock.writeIndex(next)
}

func pathJoin(prefix, rel string) string {
	if prefix == "" {
		return rel
	}
	return prefix + "/" + rel
}

// restoreFile writes name as the tree entry e has it, unless the file on
// disk is that already. It never writes through a link: a folder on the
// way that is a link or a file is replaced by a folder.
func (r *Repo) restoreFile(st *filesystem.Storage, name string, e *object.TreeEntry) error {
	blob, err := object.GetBlob(st, e.Hash)
	if err != nil {
		return fmt.Errorf("read %s of grub's last turn commit: %w", name, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return fmt.Errorf("read %s of grub's last turn commit: %w", name, err)
	}
	path := filepath.Join(r.root, filepath.FromSlash(name))
	if err := r.realDirs(name); err != nil {
		return err
	}
	if sameOnDisk(path, e.Mode, data) {
		return nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		if err := os.RemoveAll(path); err != nil {
			return err
		}
	} else if err == nil {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	if e.Mode == filemode.Symlink {
		return os.Symlink(string(data), path)
	}
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("restore %s: %w", name, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sameOnDisk reports whether path is already what the tree holds.
func sameOnDisk(path string, mode filemode.FileMode, data []byte) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	switch mode {
	case filemode.Symlink:
		t, err := os.Readlink(path)
		return err == nil && t == string(data)
	case filemode.Executable, filemode.Regular:
		if !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) || (fi.Mode()&0o100 != 0) != (mode == filemode.Executable) {
			return false
		}
		got, err := os.ReadFile(path)
		return err == nil && string(got) == string(data)
	}
	return false
}

// realDirs makes every folder above name (a repository path) a real
// folder: one that is a link or a file is removed and made again.
func (r *Repo) realDirs(name string) error {
	dir := r.root
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil {
			if err := os.Remove(dir); err != nil {
				return fmt.Errorf("restore %s: %w", name, err)
			}
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
	}
	return nil
}

// removeTracked removes a file the index tracked that grub's commit does
// not hold, unless a folder above it is not a real folder (then it is not
// the tracked file).
func (r *Repo) removeTracked(name string) {
	dir := r.root
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return
		}
	}
	path := filepath.Join(r.root, filepath.FromSlash(name))
	if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
		_ = os.Remove(path)
	}
}

// TurnCommitted reports whether a commit on HEAD is grub's own commit of
// taskID's turn iteration: its trailers name that turn and its tree holds
// path (workspace-relative) with exactly content, the state.json grub
// wrote for the turn's record just before committing it, which no turn
// can know beforehand. Trailers alone prove nothing: an agent can write
// them. The walk stops at the task's first commit of an earlier turn.
func (r *Repo) TurnCommitted(taskID string, iteration int, path string, content []byte) (bool, error) {
	want := plumbing.ComputeHash(plumbing.BlobObject, content)
	return r.turnCommitWhere(taskID, iteration, path, func(f *object.File) bool { return f.Hash == want })
}
