package gitx

import (
	"context"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Dirty lists the workspace's uncommitted changes, as `git status` would
// show them: files staged but not committed, tracked files modified or
// deleted, untracked files that no ignore rule covers, and unmerged paths.
// Ignored files are not changes. The paths are relative to the workspace,
// slash-separated, sorted and complete (the caller shortens the list for
// its message); an empty list means the workspace is clean.
//
// On a repository without commits every file counts: the caller makes
// InitialCommit instead of refusing.
func (r *Repo) Dirty() ([]string, error) {
	w, err := r.openWorkTree()
	if err != nil {
		return nil, err
	}
	idx, err := w.readIndex()
	if err != nil {
		return nil, err
	}
	sc := newScanner(context.Background(), r, idx, w.cfg, nil, nil)
	sc.maxSize = 0 // git status lists a file over MaxFileSize too
	sc.convert = convertIfGit
	staged := make([]*index.Entry, 0, len(sc.names))
	for _, name := range sc.names {
		staged = append(staged, sc.tracked[name])
	}
	sort.Slice(staged, func(i, j int) bool { return staged[i].Name < staged[j].Name })
	work, err := sc.scan(r, w.ign)
	if err != nil {
		return nil, err
	}

	dirty := make(map[string]bool)
	for _, name := range sc.unmerged {
		dirty[name] = true
	}
	// The work tree against the index.
	diffEntries(staged, work, dirty)

	// The index against HEAD, read only when their trees differ.
	tree, err := headTree(w.g)
	if err != nil {
		return nil, err
	}
	head, err := subtree(w.st, tree, r.prefixComps())
	if err != nil {
		return nil, err
	}
	base := r.relStart()
	mine, err := treeWriter{}.build(staged, base)
	if err != nil {
		return nil, err
	}
	if mine != head {
		files, err := flatten(w.st, head)
		if err != nil {
			return nil, err
		}
		for _, e := range staged {
			rel := e.Name[base:]
			if te, ok := files[rel]; !ok || te.Hash != e.Hash || te.Mode != e.Mode {
				dirty[e.Name] = true
			}
			delete(files, rel)
		}
		for rel := range files {
			dirty[joinRel(r.prefix, rel)] = true
		}
	}

	out := make([]string, 0, len(dirty))
	for name := range dirty {
		out = append(out, r.rel(name))
	}
	sort.Strings(out)
	return out, nil
}

// diffEntries marks the names whose mode or content differ between two
// sorted entry lists, or that only one of them has.
func diffEntries(a, b []*index.Entry, dirty map[string]bool) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			dirty[a[i].Name] = true
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			dirty[b[j].Name] = true
			j++
		default:
			if a[i].Hash != b[j].Hash || a[i].Mode != b[j].Mode || a[i].IntentToAdd != b[j].IntentToAdd {
				dirty[a[i].Name] = true
			}
			i++
			j++
		}
	}
}

// TreeHash returns a token for the workspace's content: the hash of the
// git tree that CommitTurn would commit for it right now, leaving out the
// workspace paths in exclude (grub passes ".grub": its own files are not
// progress). Ignored files and files over MaxFileSize are not part of it, and a file touched without
// changing its content does not change it. Two equal tokens mean the
// workspace, minus exclude, holds the same files with the same content and
// modes. It writes nothing: no object, no index.
//
// Cost: a walk of the workspace that skips ignored folders and reads only
// the files whose size or time differ from the index (new files, and files
// changed since the last commit). Where the repository converts files on
// commit (convert.go) those are hashed by git as the commit hashes them,
// so that a commit does not change the token of an unchanged work tree;
// without the git program, as they are on disk.
func (r *Repo) TreeHash(exclude ...string) (string, error) {
	w, err := r.openWorkTree()
	if err != nil {
		return "", err
	}
	idx, err := w.readIndex()
	if err != nil {
		return "", err
	}
	sc := newScanner(context.Background(), r, idx, w.cfg, nil, exclude)
	sc.convert = convertIfGit
	entries, err := sc.scan(r, w.ign)
	if err != nil {
		return "", err
	}
	h, err := treeWriter{}.build(entries, r.relStart())
	if err != nil {
		return "", err
	}
	return h.String(), nil
}
