package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A batch's files are in place (atomically, no temp file left) as soon as
// they are written, and Sync fsyncs each file once and their folder once.
func TestBatchSyncsEachFileAndFolderOnce(t *testing.T) {
	dir := t.TempDir()
	var got []string
	synced = func(p string) { got = append(got, p) }
	t.Cleanup(func() { synced = nil })
	var b Batch
	names := []string{"git-guard.json", "workspace-config.json", "task-folders.json"}
	for _, n := range names {
		if err := b.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A file written twice before Sync is synced once.
	if err := b.WriteFile(filepath.Join(dir, names[0]), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("fsynced before Sync: %v", got)
	}
	if b.Pending() != 3 {
		t.Fatalf("Pending = %d, want 3", b.Pending())
	}
	for i, n := range names {
		want := "old " + n
		if i == 0 {
			want = "new"
		}
		if data, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(data) != want {
			t.Fatalf("%s before Sync: %q, %v; want %q", n, data, err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("folder holds %d entries, want the three files", len(entries))
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, names[0]), filepath.Join(dir, names[1]), filepath.Join(dir, names[2]), dir}
	if !slices.Equal(got, want) {
		t.Fatalf("Sync fsynced %v, want %v", got, want)
	}
	if b.Pending() != 0 {
		t.Errorf("Pending after Sync = %d, want 0", b.Pending())
	}
	got = nil
	if err := b.Sync(); err != nil || len(got) != 0 {
		t.Errorf("an empty batch's Sync: %v, fsynced %v", err, got)
	}
}

// A file of the batch that is gone by Sync is an error naming it, and the
// batch is empty afterwards.
func TestBatchSyncReportsAMissingFile(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	p := filepath.Join(dir, "gone.json")
	if err := b.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	err := b.Sync()
	if err == nil || !strings.Contains(err.Error(), "gone.json") {
		t.Fatalf("Sync of a removed file: %v, want an error naming it", err)
	}
	if b.Pending() != 0 {
		t.Errorf("Pending after a failed Sync = %d, want 0", b.Pending())
	}
}
