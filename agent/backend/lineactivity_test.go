package backend

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/grub-dev/grub/agent"
)

func TestLineActivity(t *testing.T) {
	var got []string
	w := &lineActivity{act: activity{tell: func(s string) { got = append(got, s) }}}
	for _, p := range []string{"comp", "iling main.go\n", "\n  \n", "GRUB_USAGE {\"input\":1}\n", "running tests\r\nrunning tests\n", "tail "} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	w.Write([]byte(strings.Repeat("x", 2*maxActivityLine) + "\n"))
	want := []string{"compiling main.go", "running tests", "tail " + strings.Repeat("x", 75) + "…"}
	if !slices.Equal(got, want) {
		t.Errorf("activities = %q, want %q", got, want)
	}
}

func TestCommandReportsStderrLinesAsActivity(t *testing.T) {
	var mu sync.Mutex
	var got []string
	c := NewCommand(`echo "reading the prompt" >&2; echo 'GRUB_USAGE {"input":1,"cached":0,"output":1}' >&2; echo "writing files" >&2; echo done`)
	_, err := c.RunTurn(context.Background(), agent.Turn{Workspace: t.TempDir(), Activity: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"reading the prompt", "writing files"}; !slices.Equal(got, want) {
		t.Errorf("activities = %q, want %q", got, want)
	}
}
