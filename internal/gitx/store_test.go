package gitx

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// storeScanner is a scanner that writes to dir's object database.
func storeScanner(t *testing.T, dir string) *scanner {
	t.Helper()
	r := mustOpen(t, dir)
	w, err := r.openWorkTree()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	return newScanner(context.Background(), r, idx, w.cfg, w.st, nil)
}

// looseObjects lists the loose objects and temporary files under .git/objects.
func looseObjects(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dir, ".git", "objects")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A changed file is stored in the pass that hashes it: the entry's hash is
// that of the object written, whose content is the file's.
func TestStoreFileStoresWhatItHashes(t *testing.T) {
	dir, _ := committedRepo(t, map[string]string{"a.txt": "one\n"})
	content := strings.Repeat("a line of text that compresses\n", 5000)
	write(t, dir, map[string]string{"big.txt": content})
	sc := storeScanner(t, dir)
	res, err := sc.file(fileJob{rel: "big.txt", abs: filepath.Join(dir, "big.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if want := plumbing.ComputeHash(plumbing.BlobObject, []byte(content)); res.e == nil || res.e.Hash != want {
		t.Fatalf("entry %+v, want hash %s", res.e, want)
	}
	o, err := sc.store.EncodedObject(plumbing.BlobObject, res.e.Hash)
	if err != nil {
		t.Fatalf("the blob was not stored: %v", err)
	}
	rd, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != content {
		t.Fatalf("the stored blob holds %d bytes, want the file's %d", len(got), len(content))
	}

	// Stored again: the object already there is kept, no temporary file left.
	before := looseObjects(t, dir)
	if _, err := sc.file(fileJob{rel: "big.txt", abs: filepath.Join(dir, "big.txt")}); err != nil {
		t.Fatal(err)
	}
	if after := looseObjects(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("objects before %v, after %v", before, after)
	}
}

// A file replaced by a link between the walk's lstat and the read is not
// read through the link: that is a change while reading.
func TestStoreFileRefusesAFileReplacedAfterItsStat(t *testing.T) {
	dir, _ := committedRepo(t, map[string]string{"a.txt": "one\n"})
	write(t, dir, map[string]string{"f.txt": "secret0\n", "other.txt": "secret1\n"})
	abs := filepath.Join(dir, "f.txt")
	info, err := os.Lstat(abs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other.txt", abs); err != nil {
		t.Fatal(err)
	}
	sc := storeScanner(t, dir)
	before := looseObjects(t, dir)
	if _, err := sc.storeFile(abs, info); err == nil || !strings.Contains(err.Error(), "changed while grub was reading it") {
		t.Fatalf("storeFile: %v, want a change while reading", err)
	}
	if _, err := hashFile(abs, info); err == nil || !strings.Contains(err.Error(), "changed while grub was reading it") {
		t.Fatalf("hashFile: %v, want a change while reading", err)
	}
	if after := looseObjects(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("objects before %v, after %v", before, after)
	}
}

// A file that grew or shrank while it was read is an error, and nothing
// is put in the object database.
func TestStoreFileSizeChangedWhileRead(t *testing.T) {
	dir, _ := committedRepo(t, map[string]string{"a.txt": "one\n"})
	for _, c := range []struct{ name, then string }{
		{"grew", "0123456789 and more"},
		{"shrank", "0123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			abs := filepath.Join(dir, c.name+".txt")
			write(t, dir, map[string]string{c.name + ".txt": "0123456789"})
			f, err := os.Open(abs)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := storeScanner(t, dir)
			before := looseObjects(t, dir)
			// The file changes after putLooseBlob's first read.
			src := &changingReader{f: f, change: func() { write(t, dir, map[string]string{c.name + ".txt": c.then}) }}
			check := func() error {
				var one [1]byte
				if n, _ := f.Read(one[:]); n != 0 {
					return errChanged
				}
				return nil
			}
			_, err = putLooseBlob(sc.store.Filesystem(), src, 10, check)
			if !errors.Is(err, errChanged) {
				t.Fatalf("putLooseBlob: %v, want errChanged", err)
			}
			if after := looseObjects(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
				t.Fatalf("objects before %v, after %v", before, after)
			}
		})
	}
}

// changingReader reads f a few bytes at a time and calls change once,
// after the first read.
type changingReader struct {
	f      *os.File
	change func()
	done   bool
}

func (r *changingReader) Read(p []byte) (int, error) {
	if len(p) > 4 {
		p = p[:4]
	}
	n, err := r.f.Read(p)
	if !r.done {
		r.done = true
		r.change()
	}
	return n, err
}
