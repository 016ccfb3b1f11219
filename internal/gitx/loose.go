package gitx

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// errChanged is what putLooseBlob and its check return for a source that
// changed size while it was read.
var errChanged = errors.New("changed while read")

// fastZlib keeps zlib writers at best speed: a new one allocates its
// compressor's tables (over a megabyte, zeroed), which cost more than
// compressing a small file. It is a free list, not a sync.Pool: a pool
// is emptied by every garbage collection, and a turn that reads the large
// files it changes collects often, so most objects paid for new tables.
// It holds at most as many writers as a commit's goroutines use at once.
var fastZlib = make(chan *zlib.Writer, 8)

func getZlib() *zlib.Writer {
	select {
	case w := <-fastZlib:
		return w
	default:
		w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return w
	}
}

func putZlib(w *zlib.Writer) {
	w.Reset(nil) // drop the temporary file
	select {
	case fastZlib <- w:
	default:
	}
}

// putLooseBlob writes size bytes of src as a loose blob object in the
// object database of fs (the repository's git directory), compressed at
// zlib's best speed, as git itself writes loose objects
// (core.looseCompression defaults to 1): go-git's object writer uses the
// default level, several times slower on the large files a turn changes
// (state.json, the feature list), and allocates a new compressor for
// every object. Like go-git's, it writes a temporary file and renames it
// into place, and keeps an object already there. It returns the hash of
// what it read.
//
// src must hold at least size bytes (fewer: errChanged). check, when not
// nil, runs once they are read and before the object is put in place: its
// error leaves nothing in the database.
func putLooseBlob(fs billy.Filesystem, src io.Reader, size int64, check func() error) (plumbing.Hash, error) {
	return putLoose(fs, plumbing.BlobObject, src, size, check)
}

// putLoose is putLooseBlob for an object of any type.
func putLoose(fs billy.Filesystem, t plumbing.ObjectType, src io.Reader, size int64, check func() error) (plumbing.Hash, error) {
	tmp, err := fs.TempFile("objects", "tmp_obj_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			_ = fs.Remove(tmp.Name())
		}
	}()
	zw := getZlib()
	defer putZlib(zw)
	zw.Reset(tmp)
	if _, err := fmt.Fprintf(zw, "%s %d\x00", t, size); err != nil {
		return plumbing.ZeroHash, err
	}
	hasher := plumbing.NewHasher(t, size)
	if _, err := io.CopyN(io.MultiWriter(zw, hasher), src, size); err != nil {
		if errors.Is(err, io.EOF) {
			err = errChanged // shorter than size
		}
		return plumbing.ZeroHash, err
	}
	if check != nil {
		if err := check(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := tmp.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	done = true
	h := hasher.Sum()
	hex := h.String()
	file := fs.Join("objects", hex[:2], hex[2:])
	if _, err := fs.Lstat(file); err == nil {
		return h, fs.Remove(tmp.Name())
	}
	if err := fs.MkdirAll(fs.Join("objects", hex[:2]), 0o755); err != nil {
		return h, err
	}
	if err := fs.Rename(tmp.Name(), file); err != nil {
		_ = fs.Remove(tmp.Name())
		return h, err
	}
	if c, ok := fs.(billy.Change); ok {
		_ = c.Chmod(file, os.FileMode(0o444))
	}
	return h, nil
}

// hasLoose reports whether the object h is a loose object in fs.
func hasLoose(fs billy.Filesystem, h plumbing.Hash) bool {
	hex := h.String()
	_, err := fs.Lstat(fs.Join("objects", hex[:2], hex[2:]))
	return err == nil
}

// putObject writes the encoded object o, unless the database holds it
// already (loose, which is cheap to tell, or packed), as a loose object
// (putLoose).
func putObject(st *filesystem.Storage, o *plumbing.MemoryObject) (plumbing.Hash, error) {
	h := o.Hash()
	fs := st.Filesystem()
	if hasLoose(fs, h) || st.HasEncodedObject(h) == nil {
		return h, nil
	}
	rd, err := o.Reader()
	if err != nil {
		return h, err
	}
	got, err := putLoose(fs, o.Type(), rd, o.Size(), nil)
	if err == nil && got != h {
		err = fmt.Errorf("wrote %s for the %s object %s", got, o.Type(), h)
	}
	return h, err
}
