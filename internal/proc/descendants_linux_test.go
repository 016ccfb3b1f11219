package proc

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process started in a new session by a grandchild (setsid) is among our
// descendants while its parent lives, with its start time.
func TestDescendantsFindsASetsidGrandchild(t *testing.T) {
	sh := exec.Command("sh", "-c", `setsid sleep 30 & echo $!; wait`)
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sh.Process.Kill(); _ = sh.Wait() }()
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatal(err)
	}
	defer KillIfSame(pid, mustStart(t, pid))
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := Descendants()
		if err != nil {
			t.Fatal(err)
		}
		if start, ok := d[pid]; ok {
			if _, ok := d[sh.Process.Pid]; !ok {
				t.Errorf("Descendants lacks the shell %d: %v", sh.Process.Pid, d)
			}
			if want, _ := StartTime(pid); start != want {
				t.Errorf("start time %d, want %d", start, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Descendants never listed the setsid grandchild %d: %v", pid, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustStart(t *testing.T, pid int) uint64 {
	s, ok := StartTime(pid)
	if !ok {
		t.Fatalf("no start time for %d", pid)
	}
	return s
}
