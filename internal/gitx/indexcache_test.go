package gitx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decodes(r *Repo) int {
	r.index.mu.Lock()
	defer r.index.mu.Unlock()
	return r.index.decodes
}

func readIndexOf(t *testing.T, r *Repo) map[string]string {
	t.Helper()
	w, err := r.openWorkTree()
	if err != nil {
		t.Fatal(err)
	}
	idx, err := w.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range idx.Entries {
		out[e.Name] = e.Hash.String()
	}
	return out
}

// An unchanged index is decoded once; git rewriting it (here to the same
// size) or grub's own commit makes the next read decode it again.
func TestIndexDecodedOncePerVersion(t *testing.T) {
	run := gitBin(t)
	dir := gitCommittedRepo(t, run, map[string]string{"a.txt": "one\n", "b.txt": "two\n"})
	// A staged edit first: git's cache-tree extension is then the same
	// size in this index and the next one.
	write(t, dir, map[string]string{"a.txt": "1ne\n"})
	run(dir, "add", "a.txt")
	r := mustOpen(t, dir)
	indexPath := filepath.Join(dir, ".git", "index")

	first := readIndexOf(t, r)
	if _, err := r.TreeHash(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Dirty(); err != nil {
		t.Fatal(err)
	}
	if n := decodes(r); n != 1 {
		t.Fatalf("an unchanged index was decoded %d times, want 1", n)
	}

	// git stages a same-size edit: a new index of the same size.
	before, err := os.Stat(indexPath)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "ONE\n"})
	run(dir, "add", "a.txt")
	after, err := os.Stat(indexPath)
	if err != nil {
		t.Fatal(err)
	}
	if before.Size() != after.Size() {
		t.Fatalf("the index went from %d to %d bytes; the test wants a same-size rewrite", before.Size(), after.Size())
	}
	got := readIndexOf(t, r)
	if n := decodes(r); n != 2 {
		t.Fatalf("after git rewrote the index: %d decodes, want 2", n)
	}
	wantA := strings.Fields(run(dir, "ls-files", "-s", "a.txt"))[1]
	if got["a.txt"] != wantA || got["a.txt"] == first["a.txt"] {
		t.Fatalf("a.txt is %s in the index read, git staged %s (was %s)", got["a.txt"], wantA, first["a.txt"])
	}

	// grub's own commit writes a new index.
	write(t, dir, map[string]string{"c.txt": "three\n"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	n := decodes(r)
	got = readIndexOf(t, r)
	if decodes(r) != n+1 || got["c.txt"] == "" {
		t.Fatalf("after grub's commit: %d then %d decodes, c.txt %q", n, decodes(r), got["c.txt"])
	}
}

// What readIndex returns is the caller's own: changing it does not change
// what the next read returns.
func TestIndexCacheHandsOutCopies(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "one\n"})
	_ = dir
	w, err := r.openWorkTree()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the decoded index, then a cached one
		idx, err := w.readIndex()
		if err != nil {
			t.Fatal(err)
		}
		if len(idx.Entries) != 1 || idx.Entries[0].Name != "a.txt" {
			t.Fatalf("entries %+v", idx.Entries)
		}
		idx.Entries[0].Name = "changed"
		idx.Entries = append(idx.Entries[:0], idx.Entries[0], idx.Entries[0])
	}
	if n := decodes(r); n != 1 {
		t.Fatalf("%d decodes, want 1", n)
	}
}
