//go:build linux && (amd64 || arm64)

package tools

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"

	"github.com/grub-dev/grub/harness"
)

// raceCalls is how many times each file tool is called while a folder on
// the way is swapped (the reviewer's reproduction escaped after 41 calls),
// and fileRaceCalls while the file itself is: each swap there dirties the
// folder every write fsyncs, which makes the calls slow.
const (
	raceCalls     = 300
	fileRaceCalls = 100
)

// renameExchange is renameat2's RENAME_EXCHANGE flag; atFDCWD is
// AT_FDCWD, which package syscall does not name on every platform.
const (
	renameExchange = 2
	atFDCWD        = -100
)

// exchange swaps the entries a and b atomically, as the agent's shell can
// with renameat2 RENAME_EXCHANGE (mv --exchange).
func exchange(a, b string) error {
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	cwd := atFDCWD
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(cwd), uintptr(unsafe.Pointer(pa)),
		uintptr(cwd), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// swap exchanges each pair of entries, a real one and a symbolic link,
// over and over in the background, as a process left running by the
// agent's shell would. The returned stop ends it, puts every real entry
// back in its place and returns how many exchanges were made.
func swap(t *testing.T, pairs ...[2]string) (stop func() int64) {
	t.Helper()
	for _, p := range pairs {
		if err := exchange(p[0], p[1]); err != nil {
			t.Skipf("renameat2 RENAME_EXCHANGE is not available here: %v", err)
		}
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, p := range pairs {
				if exchange(p[0], p[1]) == nil {
					n.Add(1)
				}
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		for _, p := range pairs {
			if fi, err := os.Lstat(p[0]); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if err := exchange(p[0], p[1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		return n.Load()
	}
}

// snapshot returns every entry under dir with its content ("/" for a
// folder, "-> dest" for a link).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			m[rel] = "-> " + dest
		case d.IsDir():
			m[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// raceResult counts the calls of one race run.
type raceResult struct {
	wrote, edited int    // calls that succeeded
	lastWrite     string // the content of the last successful write_file
	refusals      map[string]int
}

// hammer calls write_file on writePath and edit_file on editPath n times
// each, alternating. A Go error fails the test; a refusal is
// counted (the model would be told and could try again).
func hammer(e *env, n int, writePath, editPath string) raceResult {
	e.t.Helper()
	r := raceResult{refusals: map[string]int{}}
	note := func(res Result) {
		key := "other"
		for _, k := range []string{"was replaced while the path was in use", "resolves through", "cannot resolve", "is written only by grub", "off limits"} {
			if strings.Contains(res.Text, k) {
				key = k
				break
			}
		}
		if key == "other" {
			key += ": " + res.Text
		}
		r.refusals[key]++
	}
	for i := range n {
		content := fmt.Sprintf("write %d\n", i)
		if res := e.run("write_file", map[string]any{"path": writePath, "content": content}); res.IsError {
			note(res)
		} else {
			r.wrote++
			r.lastWrite = content
		}
		if res := e.run("edit_file", map[string]any{"path": editPath, "old_string": "ping", "new_string": "ping!"}); res.IsError {
			note(res)
		} else {
			r.edited++
		}
	}
	return r
}

// hammerRounds runs hammer while swap exchanges pairs, in rounds until
// both tools got a call through (a loaded machine can run the swapper so
// often that a round lets none through), at most five.
func hammerRounds(t *testing.T, e *env, n int, writePath, editPath string, pairs ...[2]string) raceResult {
	t.Helper()
	r := raceResult{refusals: map[string]int{}}
	for round := 0; round < 5 && (r.wrote == 0 || r.edited == 0); round++ {
		stop := swap(t, pairs...)
		rr := hammer(e, n, writePath, editPath)
		swaps := stop()
		t.Logf("round %d: %d exchanges; write_file wrote %d of %d, edit_file edited %d of %d; refusals: %v",
			round, swaps, rr.wrote, n, rr.edited, n, rr.refusals)
		r.wrote, r.edited = r.wrote+rr.wrote, r.edited+rr.edited
		if rr.wrote > 0 {
			r.lastWrite = rr.lastWrite
		}
	}
	return r
}

// The reviewer's race: a folder on the way is swapped, between resolve's
// check and the write, with a symbolic link leading out of the workspace
// or into a task folder, while write_file and edit_file write below it.
// Nothing may ever be written where the link leads, and the calls that
// are not refused must land in the real folder.
func TestWriteRaceFolderSwappedForALink(t *testing.T) {
	tests := []struct {
		name      string
		dest      func(e *env) string // the folder the link leads to
		link      string              // the link, relative to the workspace root
		writeName string
		editName  string
	}{
		{name: "link out of the workspace", dest: func(e *env) string { return e.outside },
			link: "../outside", writeName: "pwned.txt", editName: "edit.txt"},
		{name: "link to a task folder", dest: func(e *env) string { return filepath.Join(e.ws, ".grub", testTaskID) },
			link: ".grub/" + testTaskID, writeName: harness.FileState, editName: harness.FileControl},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			dest := tc.dest(e)
			e.writeAbs(filepath.Join(dest, tc.editName), "ping\n")
			e.write(filepath.Join("d", tc.editName), "ping\n")
			e.symlink(tc.link, "swap")
			before := snapshot(t, dest)

			r := hammerRounds(t, e, raceCalls, "d/"+tc.writeName, "d/"+tc.editName, [2]string{filepath.Join(e.ws, "d"), filepath.Join(e.ws, "swap")})

			if after := snapshot(t, dest); !maps.Equal(before, after) {
				t.Errorf("the folder the link leads to changed:\nbefore %q\nafter  %q", before, after)
			}
			if r.wrote == 0 || r.edited == 0 {
				t.Errorf("no call got through the race (write_file %d, edit_file %d)", r.wrote, r.edited)
			}
			if got := e.read("d/" + tc.writeName); got != r.lastWrite {
				t.Errorf("d/%s holds %q, want the last successful write %q", tc.writeName, got, r.lastWrite)
			}
			if got, want := e.read("d/"+tc.editName), "ping"+strings.Repeat("!", r.edited)+"\n"; got != want {
				t.Errorf("d/%s holds %q, want %q: every successful edit, in the real folder", tc.editName, got, want)
			}
			checkNoTemps(t, e.ws)
			// Once the swapping stops, the tools work as usual.
			if res := e.run("write_file", map[string]any{"path": "d/" + tc.writeName, "content": "calm\n"}); res.IsError {
				t.Errorf("write_file after the race: %s", res.Text)
			}
			if res := e.run("edit_file", map[string]any{"path": "d/" + tc.editName, "old_string": "ping", "new_string": "pong"}); res.IsError {
				t.Errorf("edit_file after the race: %s", res.Text)
			}
		})
	}
}

// The file itself is swapped with a link out of the workspace: the write
// replaces the link or is refused, and never writes where it points.
func TestWriteRaceFileSwappedForALink(t *testing.T) {
	e := newEnv(t, nil)
	for _, name := range []string{"w.txt", "edit.txt"} {
		e.writeAbs(filepath.Join(e.outside, name), "ping\n")
		e.write(filepath.Join("f", name), "ping\n")
		e.symlink("../../outside/"+name, filepath.Join("f", name+".lnk"))
	}
	before := snapshot(t, e.outside)
	f := filepath.Join(e.ws, "f")
	r := hammerRounds(t, e, fileRaceCalls, "f/w.txt", "f/edit.txt", [2]string{filepath.Join(f, "w.txt"), filepath.Join(f, "w.txt.lnk")},
		[2]string{filepath.Join(f, "edit.txt"), filepath.Join(f, "edit.txt.lnk")})
	if after := snapshot(t, e.outside); !maps.Equal(before, after) {
		t.Errorf("the outside folder changed:\nbefore %q\nafter  %q", before, after)
	}
	if r.wrote == 0 || r.edited == 0 {
		t.Errorf("no call got through the race (write_file %d, edit_file %d)", r.wrote, r.edited)
	}
	checkNoTemps(t, e.ws)
}

// checkNoTemps fails the test if a temp file of the atomic writer was left
// in the workspace.
func checkNoTemps(t *testing.T, ws string) {
	t.Helper()
	for rel := range snapshot(t, ws) {
		if strings.Contains(filepath.Base(rel), ".tmp-") {
			t.Errorf("temp file %s left behind", rel)
		}
	}
}
