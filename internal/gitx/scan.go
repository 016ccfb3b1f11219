package gitx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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
//   - the files are stat-ed and hashed on several goroutines;
//   - with a store, a file that is read is hashed, compressed and written
//     in one pass on those goroutines (an object already in the database
//     is kept);
//   - a file larger than MaxFileSize is not read: it is left out (a tracked
//     one keeps its index entry as it was) and listed in tooBig;
//   - where the repository converts files on commit (convert.go), the
//     files it would read are hashed by one `git hash-object` instead,
//     grub's own files under the harness folder excepted.
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
	maxSize  int64                   // files larger than this are left out (0: no cap)
	jobs     []fileJob               // files found by the walk
	out      []*index.Entry
	tooBig   []LeftOut // files left out for their size, by repository path

	// submodules are the paths a gitlink is kept for (declared in
	// .gitmodules before the turn: guardMemo.submodules).
	submodules     map[string]bool
	harnessDir     string            // grub's folder (repository path); "": no harness rule
	harnessTracked map[string]bool   // the names committed in a task folder
	harnessKeep    map[string]bool   // names under harnessDir whose index entries stay as they are
	harnessTasks   func(string) bool // the task folders taken in; nil: every one

	convert   convertMode // what to do where the repository converts
	outside   []string    // what outside the work tree asks for conversion (gitConfig.convert)
	attrFiles []string    // the .gitattributes files seen (repository paths)
	viaGit    bool        // the files read are hashed by git (decideConversion)
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
		maxSize:  MaxFileSize,
		outside:  cfg.convert,
	}
	s.harnessDir, s.harnessTracked, s.harnessKeep, s.harnessTasks = r.harnessRule()
	s.submodules = r.guard.submodules(r.root)
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
	s.attrsAbove(comps)
	if err := s.walk(r.prefix, comps, ps, false); err != nil {
		return nil, err
	}
	if err := s.decideConversion(); err != nil {
		return nil, err
	}
	if err := s.runJobs(); err != nil {
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

// readFolder lists the folder dir (a repository path) and returns its
// absolute path; a folder that is gone lists as nil, no error.
func (s *scanner) readFolder(dir string) (string, []os.DirEntry, error) {
	abs := filepath.Join(s.root, filepath.FromSlash(dir))
	des, err := os.ReadDir(abs)
	switch {
	case err != nil && isNotExist(err):
		return abs, nil, nil
	case err != nil:
		return abs, nil, fmt.Errorf("read folder %s: %w", abs, err)
	}
	return abs, des, nil
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
	abs, des, err := s.readFolder(dir)
	if err != nil || des == nil {
		return err
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
		case ".gitattributes":
			if d.Type().IsRegular() {
				s.attrFiles = append(s.attrFiles, joinRel(dir, ".gitattributes"))
			}
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
				if s.submodules[rel] {
					c := *old
					s.out = append(s.out, &c)
					continue
				}
				old = nil // a gitlink nobody declared leaves the index
			}
			ign := ignoredDir || matchIgnored(ps, p, true)
			if ign && !s.hasTrackedUnder(rel) {
				continue
			}
			if rel == s.harnessDir {
				if err := s.walkHarness(rel); err != nil {
					return err
				}
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
			s.jobs = append(s.jobs, fileJob{rel: rel, abs: filepath.Join(abs, name), old: old})
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

// fileJob is a file the walk found: the index entry it had, if any.
type fileJob struct {
	rel, abs string
	old      *index.Entry
	harness  bool // one of grub's own files: committed as grub wrote it, never converted
}

// fileResult is a job's new index entry (nil: the file vanished).
type fileResult struct {
	e      *index.Entry
	size   int64 // the file's size when it was stat-ed
	tooBig bool  // over the size cap: not read; e is the tracked entry kept as it was, or nil
	// viaGit: e's hash is still to come from git (hashPending), which
	// reads the file info described.
	viaGit bool
	info   fs.FileInfo
}

// runJobs stats and, where needed, reads the files the walk found, on
// several goroutines (lstat dominates a walk of an unchanged tree, as in
// git's preload-index): with a store, a file read is hashed, compressed
// and written as a loose blob in the same pass (storeFile).
func (s *scanner) runJobs() error {
	res := make([]fileResult, len(s.jobs))
	errs := make([]error, len(s.jobs))
	workers := min(runtime.GOMAXPROCS(0), 8, len(s.jobs)/256+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(s.jobs) || s.ctx.Err() != nil {
					return
				}
				res[i], errs[i] = s.file(s.jobs[i])
			}
		})
	}
	wg.Wait()
	if err := s.ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := s.hashPending(res); err != nil {
		return err
	}
	for i, r := range res {
		if r.tooBig {
			s.tooBig = append(s.tooBig, LeftOut{Path: s.jobs[i].rel, Size: r.size})
		}
		if r.e != nil {
			s.out = append(s.out, r.e)
		}
	}
	return nil
}

// file returns the index entry for one file, reading the file only when
// its entry is not fresh.
func (s *scanner) file(j fileJob) (fileResult, error) {
	info, err := os.Lstat(j.abs)
	if err != nil {
		if isNotExist(err) {
			return fileResult{}, nil // removed while we looked
		}
		return fileResult{}, fmt.Errorf("stat %s: %w", j.abs, err)
	}
	mode := s.modeOf(info, j.old)
	if j.old != nil && s.fresh(j.old, info, mode) {
		c := *j.old
		return fileResult{e: &c}, nil
	}
	if s.maxSize > 0 && mode != filemode.Symlink && info.Size() > s.maxSize {
		r := fileResult{tooBig: true, size: info.Size()}
		if j.old != nil {
			c := *j.old
			r.e = &c
		}
		return r, nil
	}
	var h plumbing.Hash
	switch {
	case mode == filemode.Symlink:
		h, err = s.link(j.abs)
	case s.viaGit && !j.harness && info.Mode().IsRegular():
		r := fileResult{size: info.Size(), viaGit: true, info: info, e: &index.Entry{Name: j.rel, Mode: mode, Size: uint32(info.Size()), ModifiedAt: info.ModTime()}}
		fillSys(r.e, info)
		return r, nil
	case s.store == nil:
		h, err = hashFile(j.abs, info)
	default:
		h, err = s.storeFile(j.abs, info)
	}
	if err != nil {
		return fileResult{}, err
	}
	r := fileResult{size: info.Size(), e: &index.Entry{Name: j.rel, Hash: h, Mode: mode, Size: uint32(info.Size()), ModifiedAt: info.ModTime()}}
	fillSys(r.e, info)
	return r, nil
}

// hashPending has git hash the files whose results wait for it (one
// process for all, with -w when the scan stores blobs), then checks that
// each is still the file it stat-ed: one changed meanwhile fails the
// scan, as a file that changes while gitx reads it does.
func (s *scanner) hashPending(res []fileResult) error {
	var at []int
	var paths []string
	for i, r := range res {
		if r.viaGit {
			at, paths = append(at, i), append(paths, s.jobs[i].rel)
		}
	}
	if len(at) == 0 {
		return nil
	}
	hashes, err := hashWithGit(s.ctx, s.root, paths, s.store != nil)
	if err != nil {
		return err
	}
	for k, i := range at {
		r := res[i]
		now, err := os.Lstat(s.jobs[i].abs)
		if err != nil || !os.SameFile(now, r.info) || now.Size() != r.info.Size() || !now.ModTime().Equal(r.info.ModTime()) || !sysMatches(r.e, now) {
			return changedError(s.jobs[i].abs)
		}
		r.e.Hash = hashes[k]
	}
	return nil
}

// link hashes a symbolic link's target, the content git stores for it,
// and with a store writes it as a blob.
func (s *scanner) link(abs string) (plumbing.Hash, error) {
	target, err := os.Readlink(abs)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the link %s: %w", abs, err)
	}
	if s.store == nil {
		return plumbing.ComputeHash(plumbing.BlobObject, []byte(target)), nil
	}
	h, err := putLooseBlob(s.store.Filesystem(), strings.NewReader(target), int64(len(target)), nil)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store the link %s in the object database: %w", abs, err)
	}
	return h, nil
}

// openSame opens the file at abs and checks that it is still the file
// info describes (not replaced by another file or a link since the lstat)
// with the same size.
func openSame(abs string, info fs.FileInfo) (*os.File, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", abs, err)
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(now, info) || now.Size() != info.Size() {
		f.Close()
		return nil, changedError(abs)
	}
	return f, nil
}

// hashFile hashes the content of the regular file info describes.
func hashFile(abs string, info fs.FileInfo) (plumbing.Hash, error) {
	f, err := openSame(abs, info)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	size := info.Size()
	hasher := plumbing.NewHasher(plumbing.BlobObject, size)
	n, err := io.Copy(hasher, f)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", abs, err)
	}
	if n != size {
		return plumbing.ZeroHash, changedError(abs)
	}
	return hasher.Sum(), nil
}

// storeFile reads the regular file info describes once: it hashes it and
// writes it to the object database as a loose blob in the same pass
// (putLooseBlob), so the hash it returns is that of exactly the bytes
// stored. A file whose size changed while it was read is an error, and
// then nothing is stored; an object already in the database is kept.
func (s *scanner) storeFile(abs string, info fs.FileInfo) (plumbing.Hash, error) {
	f, err := openSame(abs, info)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	size := info.Size()
	unchanged := func() error {
		var one [1]byte
		if n, _ := f.Read(one[:]); n != 0 {
			return errChanged // it grew
		}
		if now, err := f.Stat(); err != nil || now.Size() != size {
			return errChanged
		}
		return nil
	}
	h, err := putLooseBlob(s.store.Filesystem(), f, size, unchanged)
	if errors.Is(err, errChanged) {
		return plumbing.ZeroHash, changedError(abs)
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("store %s in the object database: %w", abs, err)
	}
	return h, nil
}

func changedError(abs string) error {
	return fmt.Errorf("%s changed while grub was reading it; commit again once nothing writes to it", abs)
}
