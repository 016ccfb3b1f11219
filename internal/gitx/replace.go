package gitx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Hidden is what in the git directory makes git show another history
// than the task's commits hold, though every ref is where grub left it:
// a replace ref (git replace; loose or packed) of one of the commits of
// the history or of a file or folder of its newest commit's tree (git log,
// checkout, diff and archive then show the replacement), and a line of
// .git/shallow that cuts the history at one of its commits whose parents
// the repository holds (git log stops there, and git gc may prune what
// is below). go-git, and so grub's own commits, ignore both: only the
// user's git is fooled.
type Hidden struct {
	Replace  []plumbing.ReferenceName // refs/replace/<id>
	Shallow  []plumbing.Hash          // lines of .git/shallow
	problems []string
}

// Problem says what was found, in words; "" when nothing.
func (h Hidden) Problem() string { return strings.Join(h.problems, "; ") }

// HiddenHistory looks for what hides the history of commit and of HEAD
// (see Hidden).
// It costs a stat and a read of packed-refs and shallow when there is
// nothing to find.
func (r *Repo) HiddenHistory(commit string) (Hidden, error) {
	var h Hidden
	if commit == "" {
		return h, nil
	}
	g, st, err := r.open()
	if err != nil {
		return h, err
	}
	tips := []plumbing.Hash{plumbing.NewHash(commit)}
	if head, err := headCommit(g); err == nil && !head.IsZero() && head != tips[0] {
		tips = append(tips, head) // commits on top are the history too once grub commits on them
	}
	if err := hiddenByReplace(g, st, tips, &h); err != nil {
		return h, err
	}
	return h, hiddenByShallow(g, st, tips, &h)
}

// inHistory reports whether c is one of tips or an ancestor of one.
func inHistory(g *git.Repository, tips []plumbing.Hash, c plumbing.Hash) (bool, error) {
	for _, t := range tips {
		held, err := descends(g, t, c)
		if err != nil || held {
			return held, err
		}
	}
	return false, nil
}

// hiddenByReplace adds the replace refs of the history's commits and of
// the files and folders of mark's tree.
func hiddenByReplace(g *git.Repository, st *filesystem.Storage, tips []plumbing.Hash, h *Hidden) error {
	if !hasReplaceRefs(st) {
		return nil
	}
	refs, err := st.IterReferences()
	if err != nil {
		return err
	}
	var inTree map[plumbing.Hash]bool
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		id, ok := strings.CutPrefix(name, "refs/replace/")
		if !ok || !plumbing.IsHash(id) {
			return nil
		}
		replaced := plumbing.NewHash(id)
		if _, err := object.GetCommit(st, replaced); err == nil {
			if held, err := inHistory(g, tips, replaced); err != nil || !held {
				return err
			}
			h.Replace = append(h.Replace, ref.Name())
			h.problems = append(h.problems, fmt.Sprintf("%s makes git show another commit in place of %s, a commit of the task's history (git replace; remove it with git replace -d %s)", name, abbrev(id), abbrev(id)))
			return nil
		}
		if inTree == nil {
			inTree = map[plumbing.Hash]bool{}
			for _, t := range tips {
				for o := range treeObjects(st, t) {
					inTree[o] = true
				}
			}
		}
		if inTree[replaced] {
			h.Replace = append(h.Replace, ref.Name())
			h.problems = append(h.problems, fmt.Sprintf("%s makes git show other content in place of %s, a file or folder of grub's last turn commit (git replace; remove it with git replace -d %s)", name, abbrev(id), abbrev(id)))
		}
		return nil
	})
	return err
}

// hasReplaceRefs tells cheaply whether there may be any replace ref.
func hasReplaceRefs(st *filesystem.Storage) bool {
	fs := st.Filesystem()
	if _, err := fs.Lstat("refs/replace"); err == nil {
		return true
	}
	f, err := fs.Open("packed-refs")
	if err != nil {
		return false
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	return bytes.Contains(data, []byte("refs/replace/"))
}

// treeObjects lists the trees and blobs of commit's tree (none when it
// cannot be read).
func treeObjects(st *filesystem.Storage, commit plumbing.Hash) map[plumbing.Hash]bool {
	seen := map[plumbing.Hash]bool{}
	c, err := object.GetCommit(st, commit)
	if err != nil {
		return seen
	}
	seen[c.TreeHash] = true
	t, err := c.Tree()
	if err != nil {
		return seen
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	for {
		_, e, err := w.Next()
		if err != nil {
			return seen
		}
		seen[e.Hash] = true
	}
}

// hiddenByShallow adds the lines of .git/shallow that name a commit of
// mark's history whose parents are all in the repository: a real shallow
// clone's boundary has its parents missing.
func hiddenByShallow(g *git.Repository, st *filesystem.Storage, tips []plumbing.Hash, h *Hidden) error {
	for _, id := range shallowLines(st) {
		c, err := object.GetCommit(st, id)
		if err != nil || len(c.ParentHashes) == 0 {
			continue
		}
		present := true
		for _, p := range c.ParentHashes {
			if _, err := object.GetCommit(st, p); err != nil {
				present = false
			}
		}
		if !present {
			continue // a shallow clone's boundary
		}
		held, err := inHistory(g, tips, id)
		if err != nil {
			return err
		}
		if held {
			h.Shallow = append(h.Shallow, id)
			h.problems = append(h.problems, fmt.Sprintf(".git/shallow cuts the history at %s, a commit of the task's history whose parents the repository holds (git log stops there and git gc may prune what is below)", abbrev(id.String())))
		}
	}
	return nil
}

func shallowLines(st *filesystem.Storage) []plumbing.Hash {
	f, err := st.Filesystem().Open("shallow")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []plumbing.Hash
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); plumbing.IsHash(line) {
			out = append(out, plumbing.NewHash(line))
		}
	}
	return out
}

// UnhideHistory removes what HiddenHistory found for commit: each
// replace ref, its value kept first under keep-replace-N (N from 1), and
// the shallow lines (the file removed when none is left). kept lists the
// refs written.
func (r *Repo) UnhideHistory(commit, keep string) (kept []string, err error) {
	h, err := r.HiddenHistory(commit)
	if err != nil || (len(h.Replace) == 0 && len(h.Shallow) == 0) {
		return nil, err
	}
	_, st, err := r.open()
	if err != nil {
		return nil, err
	}
	for i, name := range h.Replace {
		ref, err := st.Reference(name)
		if err != nil {
			return kept, err
		}
		if ref.Type() == plumbing.HashReference {
			k := plumbing.ReferenceName(fmt.Sprintf("%s-replace-%d", keep, i+1))
			if err := writeRef(st, k, ref.Hash()); err != nil {
				return kept, fmt.Errorf("keep %s as %s: %w", name, k, err)
			}
			kept = append(kept, k.String())
		}
		if err := st.RemoveReference(name); err != nil {
			return kept, fmt.Errorf("remove %s: %w", name, err)
		}
	}
	if len(h.Shallow) > 0 {
		if err := dropShallow(st, h.Shallow); err != nil {
			return kept, err
		}
	}
	return kept, nil
}

// dropShallow writes .git/shallow again without the lines drop names,
// renaming a new file over it (removing it when no line is left).
func dropShallow(st *filesystem.Storage, drop []plumbing.Hash) error {
	bad := map[plumbing.Hash]bool{}
	for _, d := range drop {
		bad[d] = true
	}
	var keepLines []string
	for _, id := range shallowLines(st) {
		if !bad[id] {
			keepLines = append(keepLines, id.String())
		}
	}
	fs := st.Filesystem()
	if len(keepLines) == 0 {
		if err := fs.Remove("shallow"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove .git/shallow: %w", err)
		}
		return nil
	}
	tmp := fmt.Sprintf(".grub-shallow-%d.tmp", os.Getpid())
	f, err := fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(strings.Join(keepLines, "\n") + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, "shallow")
	}
	if err != nil {
		_ = fs.Remove(tmp)
		return fmt.Errorf("write .git/shallow: %w", err)
	}
	return nil
}
