package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A committed state.json holds nothing that only makes sense on one
// machine: sandbox paths inside the workspace are stored relative to it.
func TestSandboxPathsStoredRelative(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	outside := filepath.Join(t.TempDir(), "cache")
	st := newState("portable")
	st.Sandbox.Allow = []string{filepath.Join(s.Root, "out"), s.Root, outside, filepath.Join(s.Root, "out")}
	mustCreate(t, s, st)
	data, err := os.ReadFile(s.Path(st.ID, FileState))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), s.Root) {
		t.Errorf("state.json names the workspace's absolute path:\n%s", data)
	}
	got, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"out", ".", outside}; !slices.Equal(got.Sandbox.Allow, want) {
		t.Errorf("allow = %q, want %q", got.Sandbox.Allow, want)
	}
	// Another clone resolves them against its own root.
	other, err := s.At(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{filepath.Join(other.Root, "out"), other.Root, outside} {
		if p := other.ResolvePath(got.Sandbox.Allow[i]); p != want {
			t.Errorf("ResolvePath(%q) = %s, want %s", got.Sandbox.Allow[i], p, want)
		}
	}
}

// The host a lock records is Store.Host when set (GRUB_HOSTNAME), and
// At keeps it.
func TestLockRecordsStoreHost(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	s.Host = "machine-b"
	st := mustCreate(t, s, newState("host"))
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Info().Host; h != "machine-b" {
		t.Errorf("lock host %q, want machine-b", h)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	info, held, err := s.Holder(st.ID)
	if err != nil || held || info.Host != "machine-b" {
		t.Errorf("Holder = %+v, %v, %v", info, held, err)
	}
	other, _ := s.At(t.TempDir())
	if other.HostName() != "machine-b" {
		t.Errorf("At lost the host: %q", other.HostName())
	}
	if h, _ := os.Hostname(); (&Store{}).HostName() != h {
		t.Errorf("HostName without Host is not os.Hostname")
	}
}
