package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/harness"
)

// TestRmAsksOnATerminal: on a terminal grub rm asks; anything but yes
// keeps the task, yes removes its folder and its private folder.
func TestRmAsksOnATerminal(t *testing.T) {
	for _, c := range []struct {
		answer  string
		removed bool
	}{{"n\n", false}, {"\n", false}, {"yes\n", true}, {"Y\n", true}} {
		e := newTestEnv(t)
		e.task("0a1b2c3d", time.Hour, nil)
		priv, err := e.store.PrivateDir("0a1b2c3d")
		if err != nil {
			t.Fatal(err)
		}
		ios, in, _, errOut := TestIOStreams()
		ios.InTTY = true
		in.WriteString(c.answer)
		err = rmRun(&RmOptions{IO: ios, Store: func() (*harness.Store, error) { return e.store, nil }, ID: "0a1b"})
		if err != nil {
			t.Fatalf("answer %q: %v", c.answer, err)
		}
		if !strings.Contains(errOut.String(), "Remove task 0a1b2c3d (paused: add OAuth login to the API): .grub/0a1b2c3d and its private folder? Its commits stay. [y/N] ") {
			t.Errorf("answer %q: the question was %q", c.answer, errOut)
		}
		for _, p := range []string{e.store.Dir("0a1b2c3d"), priv} {
			if _, err := os.Stat(p); (err != nil) != c.removed {
				t.Errorf("answer %q: %s: %v, want removed %v", c.answer, p, err, c.removed)
			}
		}
	}
}
