package gitx

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// treeWriter turns index entries into tree objects. With a nil store it
// only computes the hashes.
type treeWriter struct {
	store *filesystem.Storage
}

// build returns the tree of entries (sorted by name), whose names all start
// with the same base bytes ("" or "dir/"). An empty list is the empty tree.
func (w treeWriter) build(entries []*index.Entry, base int) (plumbing.Hash, error) {
	var tes []object.TreeEntry
	for i := 0; i < len(entries); {
		name := entries[i].Name[base:]
		slash := strings.IndexByte(name, '/')
		if slash < 0 {
			tes = append(tes, object.TreeEntry{Name: name, Mode: entries[i].Mode, Hash: entries[i].Hash})
			i++
			continue
		}
		prefix := entries[i].Name[:base+slash+1]
		j := i + 1
		for j < len(entries) && strings.HasPrefix(entries[j].Name, prefix) {
			j++
		}
		h, err := w.build(entries[i:j], len(prefix))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tes = append(tes, object.TreeEntry{Name: name[:slash], Mode: filemode.Dir, Hash: h})
		i = j
	}
	return w.put(tes)
}

// put encodes a tree and, with a store, writes it unless it exists.
func (w treeWriter) put(tes []object.TreeEntry) (plumbing.Hash, error) {
	sort.Sort(object.TreeEntrySorter(tes))
	o := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: tes}).Encode(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode a tree: %w", err)
	}
	if w.store == nil {
		return o.Hash(), nil
	}
	h, err := putObject(w.store, o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write a tree object: %w", err)
	}
	return h, nil
}

// replace returns tree (zero: empty) with the folder at comps set to sub,
// or removed when sub is the empty tree. Only the trees along comps are
// rewritten.
func (w treeWriter) replace(store *filesystem.Storage, tree plumbing.Hash, comps []string, sub plumbing.Hash) (plumbing.Hash, error) {
	var tes []object.TreeEntry
	if !tree.IsZero() {
		t, err := object.GetTree(store, tree)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", tree, err)
		}
		tes = append(tes, t.Entries...)
	}
	var child plumbing.Hash
	kept := tes[:0:0]
	for _, te := range tes {
		if te.Name == comps[0] {
			if te.Mode == filemode.Dir {
				child = te.Hash
			}
			continue
		}
		kept = append(kept, te)
	}
	next := sub
	if len(comps) > 1 {
		var err error
		if next, err = w.replace(store, child, comps[1:], sub); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if next != emptyTree {
		kept = append(kept, object.TreeEntry{Name: comps[0], Mode: filemode.Dir, Hash: next})
	}
	return w.put(kept)
}

// emptyTree is the hash of the tree with no entries.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// subtree returns the hash of the folder comps inside tree, or emptyTree
// when tree is zero or has no such folder.
func subtree(store *filesystem.Storage, tree plumbing.Hash, comps []string) (plumbing.Hash, error) {
	if tree.IsZero() {
		return emptyTree, nil
	}
	for _, c := range comps {
		t, err := object.GetTree(store, tree)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", tree, err)
		}
		found := false
		for _, te := range t.Entries {
			if te.Name == c && te.Mode == filemode.Dir {
				tree, found = te.Hash, true
				break
			}
		}
		if !found {
			return emptyTree, nil
		}
	}
	return tree, nil
}

// flatten lists every file of tree (zero or emptyTree: none) as
// path → mode and hash, the paths relative to tree.
func flatten(store *filesystem.Storage, tree plumbing.Hash) (map[string]object.TreeEntry, error) {
	files := make(map[string]object.TreeEntry)
	if tree.IsZero() || tree == emptyTree {
		return files, nil
	}
	t, err := object.GetTree(store, tree)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", tree, err)
	}
	walker := object.NewTreeWalker(t, true, nil)
	defer walker.Close()
	for {
		name, te, err := walker.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("read tree %s: %w", tree, err)
		}
		if te.Mode == filemode.Dir {
			continue
		}
		files[name] = te
	}
	return files, nil
}
