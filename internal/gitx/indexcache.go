package gitx

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// indexCache keeps the last .git/index a Repo decoded, so that the calls
// of one turn (the change token before and after the agent, the commit)
// decode an unchanged index once. It is keyed by the file's identity and
// stat data (device, inode, size, modification and change times with
// nanoseconds) and by the checksum git writes at its end: git and grub
// both write a new index to a temporary file renamed over the old one, so
// any rewrite is a new inode with a new change time, and the checksum
// covers the rare same-size rewrite that would reuse both within one tick
// of the file system's clock. An index without a checksum
// (index.skipHash) is never cached. The decoded index is never handed
// out: every caller gets its own deep copy.
type indexCache struct {
	mu      sync.Mutex
	key     indexKey
	idx     *index.Index // nil: nothing cached
	decodes int          // how many times an index was decoded (for tests)
}

// indexKey identifies one version of an index file.
type indexKey struct {
	path         string
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds since the epoch
	sum          plumbing.Hash
}

// readIndex reads .git/index: a copy of the cached one when the file is
// the one last decoded, else decoded afresh.
func (w *workTree) readIndex() (*index.Index, error) {
	idx, err := w.cache.read(filepath.Join(w.st.Filesystem().Root(), indexFile))
	if err != nil {
		return nil, fmt.Errorf("read the git index (.git/index): %w", err)
	}
	return idx, nil
}

func (c *indexCache) read(path string) (*index.Index, error) {
	f, err := os.Open(path)
	if isNotExist(err) {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	key, ok := indexKeyOf(path, f, info)
	if ok && c != nil {
		if idx := c.get(key); idx != nil {
			return idx, nil
		}
	}
	idx := &index.Index{Version: 2, ModTime: info.ModTime()}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, err
	}
	if c == nil {
		return idx, nil
	}
	c.mu.Lock()
	c.decodes++
	c.mu.Unlock()
	// Cache it only when the file did not change while it was read.
	if after, err := f.Stat(); ok && err == nil {
		if again, ok := indexKeyOf(path, f, after); ok && again == key {
			c.put(key, copyIndex(idx))
		}
	}
	return idx, nil
}

// indexKeyOf is the key of the open index file f; false when it cannot be
// told apart from a rewrite (no inode data here, or no checksum).
func indexKeyOf(path string, f *os.File, info fs.FileInfo) (indexKey, bool) {
	dev, ino, ctime, ok := fileIdentity(info)
	if !ok || info.Size() < int64(len(plumbing.ZeroHash)) {
		return indexKey{}, false
	}
	k := indexKey{path: path, dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: ctime}
	if _, err := f.ReadAt(k.sum[:], info.Size()-int64(len(k.sum))); err != nil || k.sum.IsZero() {
		return indexKey{}, false
	}
	return k, true
}

func (c *indexCache) get(k indexKey) *index.Index {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idx == nil || c.key != k {
		return nil
	}
	return copyIndex(c.idx)
}

func (c *indexCache) put(k indexKey, idx *index.Index) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.idx = k, idx
}

// copyIndex is a deep copy of idx: nothing a caller changes in it reaches
// the cache.
func copyIndex(idx *index.Index) *index.Index {
	c := *idx
	entries := make([]index.Entry, len(idx.Entries))
	c.Entries = make([]*index.Entry, len(idx.Entries))
	for i, e := range idx.Entries {
		entries[i] = *e
		c.Entries[i] = &entries[i]
	}
	if idx.Cache != nil {
		c.Cache = &index.Tree{Entries: append([]index.TreeEntry(nil), idx.Cache.Entries...)}
	}
	if idx.ResolveUndo != nil {
		c.ResolveUndo = &index.ResolveUndo{Entries: make([]index.ResolveUndoEntry, len(idx.ResolveUndo.Entries))}
		for i, e := range idx.ResolveUndo.Entries {
			stages := make(map[index.Stage]plumbing.Hash, len(e.Stages))
			for s, h := range e.Stages {
				stages[s] = h
			}
			c.ResolveUndo.Entries[i] = index.ResolveUndoEntry{Path: e.Path, Stages: stages}
		}
	}
	if idx.EndOfIndexEntry != nil {
		eoie := *idx.EndOfIndexEntry
		c.EndOfIndexEntry = &eoie
	}
	return &c
}
