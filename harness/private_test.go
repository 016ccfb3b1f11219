package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivateRoot(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/grub"},
		{map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/grub"},
		{map[string]string{"HOME": "/h/"}, "/h/.local/state/grub"},
		{map[string]string{"HOME": "h"}, ""},
		{map[string]string{}, ""},
	} {
		if got := PrivateRoot(env(tc.env)); got != tc.want {
			t.Errorf("PrivateRoot(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestPrivateDirIsPerWorkspaceAndPrivate(t *testing.T) {
	priv := t.TempDir()
	a, _ := Open(t.TempDir())
	b, _ := Open(t.TempDir())
	a.Private, b.Private = priv, priv
	da, err := a.PrivateDir("0123abcd")
	if err != nil {
		t.Fatal(err)
	}
	db, err := b.PrivateDir("0123abcd")
	if err != nil {
		t.Fatal(err)
	}
	if da == db {
		t.Fatalf("two workspaces share the private folder %s", da)
	}
	if !strings.HasPrefix(da, filepath.Join(priv, "tasks", "0123abcd-")) {
		t.Fatalf("private folder %s is not under %s", da, priv)
	}
	fi, err := os.Stat(da)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("private folder: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	again, _ := a.PrivateDir("0123abcd")
	if again != da {
		t.Fatalf("PrivateDir is not stable: %s then %s", da, again)
	}
	// A link to the workspace names the same folder.
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(a.Root, link); err != nil {
		t.Fatal(err)
	}
	viaLink, _ := Open(link)
	viaLink.Private = priv
	if d, _ := viaLink.PrivateDir("0123abcd"); d != da {
		t.Fatalf("through a link: %s, want %s", d, da)
	}
	if _, err := (&Store{Root: a.Root}).PrivateDir("0123abcd"); err != ErrNoPrivate {
		t.Fatalf("no private root: %v, want ErrNoPrivate", err)
	}
	if _, err := a.PrivateDir("../x"); err == nil {
		t.Fatal("a bad id was accepted")
	}
}
