package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// KeepProtected writes each content once and drops those no file names
// any more; LoadProtected returns them for the turn they were kept for
// only, and refuses a content that is not what was kept.
func TestKeepProtected(t *testing.T) {
	s, st := newTaskFolder(t)
	id := st.ID
	entries := []ProtectedEntry{
		{Path: "a_test.go", Mode: 0o644, Data: []byte("strong\n")},
		{Path: "b_test.go", Mode: 0o644, Data: []byte("strong\n")},
		{Path: "link_test.go", Mode: os.ModeSymlink | 0o777, Target: "a_test.go"},
	}
	if err := s.KeepProtected(id, 3, entries); err != nil {
		t.Fatal(err)
	}
	dir, _ := s.PrivateDir(id)
	if blobs, _ := os.ReadDir(filepath.Join(dir, dirProtectBlobs)); len(blobs) != 1 {
		t.Errorf("%d contents kept, want 1 (two files, the same bytes)", len(blobs))
	}
	if _, ok, err := s.LoadProtected(id, 4); ok || err != nil {
		t.Errorf("a copy of turn 3 loaded for turn 4: %v %v", ok, err)
	}
	got, ok, err := s.LoadProtected(id, 3)
	if err != nil || !ok || len(got) != 3 || string(got[1].Data) != "strong\n" || got[2].Target != "a_test.go" {
		t.Fatalf("loaded %+v %v %v", got, ok, err)
	}
	if err := s.KeepProtected(id, 4, []ProtectedEntry{{Path: "a_test.go", Mode: 0o644, Data: []byte("other\n")}}); err != nil {
		t.Fatal(err)
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, dirProtectBlobs))
	if len(blobs) != 1 {
		t.Fatalf("%d contents kept, want only turn 4's", len(blobs))
	}
	if err := os.WriteFile(filepath.Join(dir, dirProtectBlobs, blobs[0].Name()), []byte("forged\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LoadProtected(id, 4); err == nil {
		t.Error("a changed content was loaded")
	}
}

// LoadProtected never makes the private folder, whose existence registers
// a task (a planted or cloned one stays unregistered).
func TestLoadProtectedNeverRegisters(t *testing.T) {
	s, st := newTaskFolder(t)
	if _, ok, err := s.LoadProtected(st.ID, 1); ok || err != nil {
		t.Fatalf("LoadProtected = %v, %v", ok, err)
	}
	if s.Registered(st.ID) {
		t.Error("LoadProtected registered the task")
	}
}
