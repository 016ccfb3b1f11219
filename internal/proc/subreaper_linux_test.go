package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStatParent(t *testing.T) {
	tests := []struct {
		line string
		want statInfo
		ok   bool
	}{
		{"42 (sleep) S 7 42 42 0 -1", statInfo{'S', 7}, true},
		{"42 (a) b) (c) Z 1 42 42", statInfo{'Z', 1}, true},
		{"42 (x", statInfo{}, false},
		{"42 (x) S", statInfo{}, false},
		{"42 (x) S y 1", statInfo{}, false},
	}
	for _, tt := range tests {
		got, ok := parseStatParent([]byte(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseStatParent(%q) = %v, %v; want %v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// subreaperChildEnv makes the test binary run TestSubreaperChild for
// real. Becoming a subreaper lasts for the whole process, so it is done in
// a separate test process, not in the one running the other tests.
const subreaperChildEnv = "GRUB_PROC_SUBREAPER_CHILD"

// TestKillOrphans runs TestSubreaperChild in a fresh test process.
func TestKillOrphans(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubreaperChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), subreaperChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSubreaperChild") {
		t.Fatalf("subreaper test process: %v\n%s", err, out)
	}
}

// TestSubreaperChild shows that, once we are a subreaper, processes that a
// command detaches (setsid in the background, a double fork) and leaves
// behind when it exits become our children, and that KillOrphans ends
// them, leaves the children listed in except alone, and reaps what it
// ended.
func TestSubreaperChild(t *testing.T) {
	if os.Getenv(subreaperChildEnv) != "1" {
		t.Skip("runs only in the process started by TestKillOrphans")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}

	// A child we still manage: it must survive KillOrphans.
	kept := exec.Command("sleep", "702")
	if err := kept.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kept.Process.Kill(); _ = kept.Wait() }()

	// A command in its own group that detaches two processes and exits.
	cmd := exec.Command("sh", "-c", "setsid sleep 700 & (sleep 701 &); exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}

	except := map[int]bool{kept.Process.Pid: true}
	var orphans []int
	deadline := time.Now().Add(5 * time.Second)
	for {
		var err error
		orphans, err = Orphans(except)
		if err != nil {
			t.Fatal(err)
		}
		// setsid is seen under its own name until it has exec'd sleep.
		if len(orphans) == 2 && comm(orphans[0]) == "sleep" && comm(orphans[1]) == "sleep" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(orphans) != 2 {
		t.Fatalf("orphans re-parented to us = %v, want the two sleeps", orphans)
	}
	for _, pid := range orphans {
		if c := comm(pid); c != "sleep" {
			t.Errorf("orphan %d is %q, want sleep", pid, c)
		}
	}

	killed, err := KillOrphans(except)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(killed)
	slices.Sort(orphans)
	if !slices.Equal(killed, orphans) {
		t.Errorf("KillOrphans signalled %v, want %v", killed, orphans)
	}
	for _, pid := range orphans {
		// Reaped, so not even a zombie is left.
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !os.IsNotExist(err) {
			t.Errorf("orphan %d still in /proc after KillOrphans (stat: %v)", pid, err)
		}
	}
	if err := kept.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the managed child did not survive KillOrphans: %v", err)
	}
	if left, _ := Orphans(except); len(left) != 0 {
		t.Errorf("orphans left: %v", left)
	}
}

func comm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

func TestStartTimeAndKillIfSame(t *testing.T) {
	cmd := exec.Command("sleep", "705")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	start, ok := StartTime(pid)
	if !ok || start == 0 {
		t.Fatalf("StartTime(%d) = %d, %v", pid, start, ok)
	}
	if KillIfSame(pid, start+1) {
		t.Error("KillIfSame signalled a process with another start time")
	}
	if !KillIfSame(pid, start) {
		t.Fatal("KillIfSame did not signal the recorded process")
	}
	if err := cmd.Wait(); err == nil {
		t.Error("the process exited normally, want killed")
	}
	if _, ok := StartTime(pid); ok {
		t.Error("StartTime of a reaped process is still ok")
	}
	if _, ok := parseStartTime([]byte("1 (a) b) Z 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99")); ok {
		t.Error("a zombie has a start time")
	}
	if v, ok := parseStartTime([]byte("1 (a) b) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 5")); !ok || v != 99 {
		t.Errorf("parseStartTime = %d, %v; want 99", v, ok)
	}
}

// BenchmarkReadProcTable is one read of every process's state and parent,
// as KillOrphans and Descendants do at each end of a turn's part.
func BenchmarkReadProcTable(b *testing.B) {
	for b.Loop() {
		if _, err := readProcTable(); err != nil {
			b.Fatal(err)
		}
	}
}
