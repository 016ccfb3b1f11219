package tools

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// openFolder enters real folders only: a link in place of one is refused
// even when it stays inside the root (resolve would have resolved it, so
// at use it can only be one swapped in since), and create makes what is
// missing.
func TestOpenFolderRefusesLinks(t *testing.T) {
	e := newEnv(t, nil)
	e.write("a/b/f.txt", "x")
	e.symlink("a", "inside")
	e.symlink("../outside", "out")
	for _, local := range []string{"inside", "inside/b", "out"} {
		root, err := openFolder(e.ws, local, true)
		if se := (*swappedError)(nil); !errors.As(err, &se) {
			t.Errorf("openFolder(%q) = %v, want a swappedError", local, err)
		}
		if root != nil {
			root.Close()
		}
	}
	root, err := openFolder(e.ws, "a/b", false)
	if err != nil {
		t.Fatal(err)
	}
	root.Close()
	if _, err := openFolder(e.ws, "a/new/deeper", false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("openFolder of a missing folder = %v, want not exist", err)
	}
	root, err = openFolder(e.ws, "a/new/deeper", true)
	if err != nil {
		t.Fatal(err)
	}
	root.Close()
	if fi, err := os.Stat(filepath.Join(e.ws, "a", "new", "deeper")); err != nil || !fi.IsDir() {
		t.Errorf("create did not make a/new/deeper: %v", err)
	}
	if entries, _ := os.ReadDir(e.outside); len(entries) != 1 {
		t.Errorf("the outside folder holds %v, want only secret.txt", entries)
	}
}
