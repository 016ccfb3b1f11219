package gitx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitLFS skips the test where Git LFS is not installed; GRUB_LFS_TEST=1
// (make test-lfs, which installs Debian's git-lfs) makes that a failure.
func gitLFS(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git-lfs"); err == nil {
		return
	}
	if os.Getenv("GRUB_LFS_TEST") == "1" {
		t.Fatal("git-lfs is not on PATH; make test-lfs installs Debian's git-lfs")
	}
	t.Skip("skipped: git-lfs is not on PATH (make test-lfs installs Debian's git-lfs and runs this test)")
}

// TestLFSCommitsPointer: in a repository set up for Git LFS (`git lfs
// install --local`, `git lfs track '*.bin'`), a turn that adds a .bin
// file is committed with the file's LFS pointer as its blob, the content
// in .git/lfs/objects, exactly as `git add` would; git status is clean
// and git lfs ls-files lists the file. A file LFS does not track is
// committed as it is.
func TestLFSCommitsPointer(t *testing.T) {
	run := gitBin(t)
	gitLFS(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	run(dir, "lfs", "install", "--local")
	run(dir, "lfs", "track", "*.bin")
	r := mustOpen(t, dir)
	if got, err := r.Conversion(); err != nil || len(got) != 1 || got[0] != ".gitattributes: *.bin filter=lfs diff=lfs merge=lfs -text" {
		t.Fatalf("Conversion() = %q, %v; want the line git lfs track wrote", got, err)
	}
	if _, err := r.InitialCommit(t.Context(), "initial"); err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("model weights \x00\x01\x02\n"), 4096)
	write(t, dir, map[string]string{"assets/model.bin": string(payload), "notes.txt": "not in LFS\n"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "add the model", Status: "running"})

	sum := sha256.Sum256(payload)
	oid := hex.EncodeToString(sum[:])
	want := fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", oid, len(payload))
	if got := blobAt(t, run, dir, "assets/model.bin"); got != want {
		t.Errorf("assets/model.bin committed as %q, want the LFS pointer %q", truncate(got, 200), want)
	}
	stored, err := os.ReadFile(filepath.Join(dir, ".git", "lfs", "objects", oid[:2], oid[2:4], oid))
	if err != nil || !bytes.Equal(stored, payload) {
		t.Errorf("the LFS object store holds %d bytes (%v), want the file's %d", len(stored), err, len(payload))
	}
	if got := blobAt(t, run, dir, "notes.txt"); got != "not in LFS\n" {
		t.Errorf("notes.txt committed as %q", got)
	}
	if st := run(dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after grub's commit:\n%s", st)
	}
	if ls := run(dir, "lfs", "ls-files", "--name-only"); strings.TrimSpace(ls) != "assets/model.bin" {
		t.Errorf("git lfs ls-files: %q, want assets/model.bin", ls)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
