package gitx

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// scanner walks the workspace the way `git add -A .` sees it and returns
// the index entries it would stage. It is what makes grub's commits fast:
//
//   - an ignored folder is skipped when it is reached (node_modules is never
//     walked), unless the index tracks something inside it;
//   - a file whose size, modification time, mode, inode and change time
//     match its index entry, and that is older than the index file itself
//     (git's "racily clean" rule), keeps the entry's hash: only new and
//     changed files are read;
//   - with a store, only blobs that are not yet in the object database are
//     written.
type scanner struct {
	ctx      context.Context
	root     string
	tracked  map[string]*index.Entry // stage-0 entries inside the workspace
	names    []string                // their names, sorted
	unmerged []string                // entries in a merge conflict (stage > 0)
	idxTime  time.Time               // modification time of .git/index
	fileMode bool                    // core.fileMode: trust the executable bit
	store    *filesystem.Storage     // nil: hash only, write nothing
	exclude  map[string]bool         // repository paths left out entirely
	out      []*index.Entry
}

func newScanner(ctx context.Context, r *Repo, idx *index.Index, cfg *gitConfig, store *filesystem.Storage, exclude []string) *scanner {
	s := &scanner{
		ctx:      ctx,
		root:     r.root,
		tracked:  make(map[string]*index.Entry),
		idxTime:  idx.ModTime,
		fileMode: cfg.fileMode(),
		store:    store,
		exclude:  make(map[string]bool),
	}
	for _, e := range idx.Entries {
		if !r.inScope(e.Name) {
			continue
		}
		if e.Stage != 0 { // not index.Merged, which go-git defines as 1
			s.unmerged = append(s.unmerged, e.Name)
			continue
		}
		s.tracked[e.Name] = e
		s.names = append(s.names, e.Name)
	}
	sort.Strings(s.names)
	for _, x := range exclude {
		x = strings.Trim(path.Clean(filepath.ToSlash(x)), "/")
		if x == "" || x == "." {
			continue
		}
		if r.prefix != "" {
			x = r.prefix + "/" + x
		}
		s.exclude[x] = true
	}
	return s
}

// scan returns the entries, sorted by name, that the workspace holds.
func (s *scanner) scan(r *Repo, ig *ignores) ([]*index.Entry, error) {
	for _, e := range s.tracked {
		if e.SkipWorktree && !s.excluded(e.Name) { // sparse checkout: not in the work tree, kept as is
			c := *e
			s.out = append(s.out, &c)
		}
	}
	comps := r.prefixComps()
	ps, err := ig.patternsAbove(r.root, comps)
	if err != nil {
		return nil, err
	}
	if err := s.walk(r.prefix, comps, ps, false); err != nil {
		return nil, err
	}
	sort.Slice(s.out, func(i, j int) bool { return s.out[i].Name < s.out[j].Name })
	return s.out, nil
}

func (s *scanner) excluded(name string) bool {
	for x := range s.exclude {
		if name == x || strings.HasPrefix(name, x+"/") {
			return true
		}
	}
	return false
}

func (s *scanner) hasTrackedUnder(dir string) bool {
	i := sort.SearchStrings(s.names, dir+"/")
	return i < len(s.names) && strings.HasPrefix(s.names[i], dir+"/")
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func (s *scanner) walk(dir string, comps []string, ps []gitignore.Pattern, ignoredDir bool) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(s.root, filepath.FromSlash(dir))
	des, err := os.ReadDir(abs)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("read folder %s: %w", abs, err)
	}
	for _, d := range des {
		switch d.Name() {
		case ".git":
			if dir != "" {
				return nil // a nested repository: git does not add its files
			}
		case ".gitignore":
			more, err := readGitignore(abs, comps)
			if err != nil {
				return err
			}
			ps = append(ps[:len(ps):len(ps)], more...)
		}
	}
	for _, d := range des {
		name := d.Name()
		if name == ".git" {
			continue
		}
		rel := joinRel(dir, name)
		if s.exclude[rel] {
			continue
		}
		p := append(comps[:len(comps):len(comps)], name)
		old := s.tracked[rel]
		switch t := d.Type(); {
		case t.IsDir():
			if old != nil && old.Mode == filemode.Submodule {
				c := *old
				s.out = append(s.out, &c)
				continue
			}
			ign := ignoredDir || matchIgnored(ps, p, true)
			if ign && !s.hasTrackedUnder(rel) {
				continue
			}
			if err := s.walk(rel, p, ps, ign); err != nil {
				return err
			}
		case t.IsRegular() || t&fs.ModeSymlink != 0:
			if old != nil && old.SkipWorktree {
				continue
			}
			if old == nil && (ignoredDir || matchIgnored(ps, p, false)) {
				continue
			}
			if err := s.file(rel, filepath.Join(abs, name), old); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *scanner) modeOf(info fs.FileInfo, old *index.Entry) filemode.FileMode {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return filemode.Symlink
	case !s.fileMode && old != nil && (old.Mode == filemode.Regular || old.Mode == filemode.Executable):
		return old.Mode
	case info.Mode()&0o100 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

// fresh reports whether old still describes the file without reading it.
func (s *scanner) fresh(old *index.Entry, info fs.FileInfo, mode filemode.FileMode) bool {
	return !old.IntentToAdd &&
		old.Mode == mode &&
		old.Size == uint32(info.Size()) &&
		old.ModifiedAt.Equal(info.ModTime()) &&
		!s.idxTime.IsZero() && info.ModTime().Before(s.idxTime) &&
		sysMatches(old, info)
}

func (s *scanner) file(rel, abs string, old *index.Entry) error {
	info, err := os.Lstat(abs)
	if err != nil {
		if isNotExist(err) {
			return nil // removed while we looked
		}
		return fmt.Errorf("stat %s: %w", abs, err)
	}
	mode := s.modeOf(info, old)
	if old != nil && s.fresh(old, info, mode) {
		c := *old
		s.out = append(s.out, &c)
		return nil
	}
	var h plumbing.Hash
	if mode == filemode.Symlink {
		h, err = s.symlinkBlob(abs)
	} else {
		h, err = s.fileBlob(abs, info.Size())
	}
	if err != nil {
		return err
	}
	e := &index.Entry{Name: rel, Hash: h, Mode: mode, Size: uint32(info.Size()), ModifiedAt: info.ModTime()}
	fillSys(e, info)
	s.out = append(s.out, e)
	return nil
}

func (s *scanner) symlinkBlob(abs string) (plumbing.Hash, error) {
	target, err := os.Readlink(abs)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the link %s: %w", abs, err)
	}
	data := []byte(target)
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if s.store == nil || s.store.HasEncodedObject(h) == nil {
		return h, nil
	}
	return putObject(s.store, plumbing.BlobObject, data)
}

// fileBlob hashes a regular file and, with a store, writes it as a blob
// unless the object database already has it.
func (s *scanner) fileBlob(abs string, size int64) (plumbing.Hash, error) {
	f, err := os.Open(abs)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", abs, err)
	}
	defer f.Close()
	hasher := plumbing.NewHasher(plumbing.BlobObject, size)
	n, err := io.Copy(hasher, f)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", abs, err)
	}
	if n != size {
		return plumbing.ZeroHash, changedError(abs)
	}
	h := hasher.Sum()
	if s.store == nil || s.store.HasEncodedObject(h) == nil {
		return h, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", abs, err)
	}
	w, header, err := s.store.LazyWriter()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store %s in the object database: %w", abs, err)
	}
	if err := header(plumbing.BlobObject, size); err != nil {
		w.Close()
		return plumbing.ZeroHash, fmt.Errorf("store %s in the object database: %w", abs, err)
	}
	if _, err := io.CopyN(w, f, size); err != nil {
		w.Close()
		return plumbing.ZeroHash, fmt.Errorf("store %s in the object database: %w", abs, err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store %s in the object database: %w", abs, err)
	}
	if hw, ok := w.(interface{ Hash() plumbing.Hash }); ok && hw.Hash() != h {
		return plumbing.ZeroHash, changedError(abs)
	}
	return h, nil
}

func changedError(abs string) error {
	return fmt.Errorf("%s changed while grub was reading it; commit again once nothing writes to it", abs)
}

// putObject writes a small object from memory.
func putObject(store *filesystem.Storage, t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	o := store.NewEncodedObject()
	o.SetType(t)
	o.SetSize(int64(len(data)))
	w, err := o.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := store.SetEncodedObject(o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write a %s object: %w", t, err)
	}
	return h, nil
}
