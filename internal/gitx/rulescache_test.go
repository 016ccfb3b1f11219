package gitx

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func ruleLoads(r *Repo) int {
	r.rules.mu.Lock()
	defer r.rules.mu.Unlock()
	return r.rules.loads
}

// sameSizeEdit rewrites path with content (the same length as before) and
// sets its modification time back, until its change time differs from
// before: only the change time, which no program can set back, tells the
// two versions apart.
func sameSizeEdit(t *testing.T, path, content string) {
	t.Helper()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if before.Size() != int64(len(content)) {
		t.Fatalf("%s: %d bytes, the edit %d", path, before.Size(), len(content))
	}
	old := ctimeOf(t, path)
	for {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		if !ctimeOf(t, path).Equal(old) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The config and ignore rules are read once while their files are
// unchanged; a same-size edit of any of them (here .git/info/exclude,
// .git/config, the global config and the global excludes file) is seen
// by the next call.
func TestRulesReadOncePerVersion(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "a\n"})
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	write(t, dir, map[string]string{"b.txt": "b\n", "c.txt": "c\n", ".git/info/exclude": "b.txt\n"})
	write(t, xdg, map[string]string{"git/ignore": "zzzzz\n"})
	t.Cleanup(func() { os.RemoveAll(filepath.Join(xdg, "git")); os.Remove(filepath.Join(home, ".gitconfig")) })
	r.rules.now = func() time.Time { return time.Now().Add(time.Hour) } // every file is old enough
	r.rules.loads = 0
	dirty := func(want ...string) {
		t.Helper()
		got, err := r.Dirty()
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("Dirty() = %v, want %v", got, want)
		}
	}
	dirty("c.txt")
	dirty("c.txt")
	if _, err := r.TreeHash(); err != nil {
		t.Fatal(err)
	}
	if n := ruleLoads(r); n != 1 {
		t.Fatalf("unchanged rules were read %d times, want 1", n)
	}

	sameSizeEdit(t, filepath.Join(dir, ".git", "info", "exclude"), "c.txt\n")
	dirty("b.txt")
	sameSizeEdit(t, filepath.Join(xdg, "git", "ignore"), "b.txt\n")
	dirty()
	if n := ruleLoads(r); n != 3 {
		t.Fatalf("the rules were read %d times over two edits, want 3", n)
	}

	// The config names another excludes file; then the file it names
	// changes.
	cfgPath := filepath.Join(dir, ".git", "config")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(home, "ex")
	write(t, home, map[string]string{"ex": "xxxxx\n"})
	write(t, dir, map[string]string{".git/config": string(data) + "[core]\n\texcludesFile = " + other + "\n"})
	dirty("b.txt")
	sameSizeEdit(t, other, "b.txt\n")
	dirty()

	// A global config that appears, then changes in place.
	write(t, home, map[string]string{".gitconfig": "[core]\n\texcludesFile = " + other + "\n"})
	dirty()
	sameSizeEdit(t, cfgPath, string(data)+"[core]\n\texcludesFile = "+other[:len(other)-1]+"y\n")
	write(t, home, map[string]string{"ey": "c.txt\n"})
	dirty("b.txt")
}

// A rule file changed within its racy margin of the reading is read
// again at every call: a second same-size write in the same tick of the
// file system's clock would leave its stat data as it was.
func TestRulesRacyFileReadAgain(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "a\n"})
	p := filepath.Join(dir, ".git", "info", "exclude")
	write(t, dir, map[string]string{".git/info/exclude": "b.txt\n"})
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{racyMargin / 2, 3}, {2 * racyMargin, 1}} {
		r.rules.last, r.rules.loads = nil, 0
		r.rules.now = func() time.Time { return ctimeOf(t, p).Add(c.after) }
		for range 3 {
			if _, err := r.TreeHash(); err != nil {
				t.Fatal(err)
			}
		}
		if n := ruleLoads(r); n != c.want {
			t.Errorf("read %v after the change: the rules were read %d times in 3 calls, want %d", c.after, n, c.want)
		}
	}
}
