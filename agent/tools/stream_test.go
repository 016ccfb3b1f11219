package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hugeOutput is what the benchmark prints: 80 MB of numbered lines on
// stdout (the size of the report that found the problem), then a last
// word. The test prints testOutput, a quarter of it, to keep the suite
// quick under -race; allocation does not grow with the output either way.
const (
	hugeOutput = 80_000_000
	testOutput = 20_000_000
)

// hugeCommand prints n bytes of 10-byte lines "%09d\n" and then "the end"
// on stdout, and a line on stderr.
func hugeCommand(n int) string {
	return fmt.Sprintf("seq -f '%%09.0f' 1 %d; echo the end; echo warned >&2", n/10)
}

// The shell streams a huge output to the spill file: grub allocates a small
// fraction of what the command printed (measured as allocation, not time,
// so the test is deterministic), the spill file holds every byte in the
// format of a small result, and the model gets the head, the tail and the
// path.
func TestShellHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 20 MB")
	}
	e := newEnv(t, nil)
	alloc, res := measureShell(t, e, hugeCommand(testOutput))
	t.Logf("%d bytes printed: %.1f MB allocated during the call", testOutput, float64(alloc)/1e6)
	if alloc > 16<<20 {
		t.Errorf("the call allocated %d bytes for %d printed, want under 16 MiB", alloc, testOutput)
	}
	if res.IsError || res.SpillPath == "" || len(res.Text) > e.cfg.InlineLimit {
		t.Fatalf("got IsError=%v SpillPath=%q, %d bytes; want a preview of a spill file", res.IsError, res.SpillPath, len(res.Text))
	}
	for _, want := range []string{"exit code 0\n--- stdout ---\n000000001\n000000002\n", res.SpillPath,
		fmt.Sprintf("This output is %d bytes", len("exit code 0\n--- stdout ---\n")+testOutput+len("the end\n--- stderr ---\nwarned")),
		fmt.Sprintf("\n%09d\n%09d\nthe end\n--- stderr ---\nwarned", testOutput/10-1, testOutput/10)} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("preview lacks %q:\n%.400s\n...\n%s", want, res.Text, res.Text[len(res.Text)-300:])
		}
	}
	// The spill file is the whole output, compared as it is read.
	f, err := os.Open(filepath.Join(e.ws, res.SpillPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	expect := func(s string) {
		t.Helper()
		b := make([]byte, len(s))
		if _, err := io.ReadFull(r, b); err != nil || string(b) != s {
			t.Fatalf("spill file has %q, want %q (%v)", b, s, err)
		}
	}
	expect("exit code 0\n--- stdout ---\n")
	want := []byte("000000000\n")
	for i := 1; i <= testOutput/10; i++ {
		line, err := r.ReadSlice('\n')
		strconv.AppendInt(want[:9-len(strconv.Itoa(i))], int64(i), 10)
		if err != nil || !bytes.Equal(line, want) {
			t.Fatalf("spill file line %d = %q, want %q (%v)", i, line, want, err)
		}
	}
	expect("the end\n--- stderr ---\nwarned")
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Errorf("spill file goes on with %q", rest)
	}
	if parts, _ := filepath.Glob(filepath.Join(e.cfg.SpillDir, "*.part")); len(parts) != 0 {
		t.Errorf("part files left: %v", parts)
	}
}

// measureShell runs command with the shell tool and returns the bytes
// allocated during the call.
func measureShell(t testing.TB, e *env, command string) (uint64, Result) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := e.run("shell", map[string]any{"command": command})
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, res
}

// Past the turn's spill cap, a streamed output keeps its head in the spill
// file and its tail from memory, with a note saying how much was dropped,
// and the next output is not saved at all: its head and tail come with the
// note.
func TestShellSpillCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.SpillCap = 1 << 20 })
	res := e.run("shell", map[string]any{"command": "seq -f '%09.0f' 1 300000; echo last words >&2"}) // 3 MB
	if res.IsError || res.SpillPath == "" {
		t.Fatalf("got %+v", res)
	}
	full := e.read(res.SpillPath)
	if !strings.HasPrefix(full, "exit code 0\n--- stdout ---\n000000001\n") || !strings.HasSuffix(full, "000300000\n--- stderr ---\nlast words") {
		t.Errorf("spill file: head %.60q, tail %q", full, full[len(full)-60:])
	}
	note := "bytes of stdout dropped: this turn's spill files reached their cap of 1 MiB ...]\n"
	if !strings.Contains(full, note) {
		t.Errorf("spill file lacks the cap note %q", note)
	}
	if len(full) > 1<<20+shellKeep+1000 || len(full) < 1<<20 {
		t.Errorf("spill file is %d bytes; want the cap's worth and the kept tail", len(full))
	}
	// The note counts exactly what is missing.
	head, tail, _ := strings.Cut(full, "\n[... ")
	var n int
	fmt.Sscanf(tail, "%d", &n)
	tailOut := tail[strings.Index(tail, "...]\n")+5 : strings.Index(tail, "\n--- stderr ---")]
	stdoutHead := strings.TrimPrefix(head, "exit code 0\n--- stdout ---\n")
	if got := len(stdoutHead) + n + len(tailOut) + 1; got != 3_000_000 {
		t.Errorf("head %d + dropped %d + tail %d + 1 = %d bytes, want the 3000000 printed", len(stdoutHead), n, len(tailOut), got)
	}
	// The budget is spent: the next large output is not saved.
	again := e.run("shell", map[string]any{"command": "seq 1 100000"})
	if again.SpillPath != "" || !strings.Contains(again.Text, "It was not saved to a file: this turn's spill files reached their cap of 1 MiB") ||
		!strings.HasSuffix(again.Text, "\n100000") {
		t.Errorf("after the cap: SpillPath %q, text %.300q ... %q", again.SpillPath, again.Text, again.Text[len(again.Text)-40:])
	}
}

// Both streams may be large: each is streamed and both are in the file.
func TestShellLargeStderr(t *testing.T) {
	e := newEnv(t, nil)
	res := e.run("shell", map[string]any{"command": "seq 1 50000; seq 1 60000 >&2; exit 2"})
	full := e.read(res.SpillPath)
	var want bytes.Buffer
	want.WriteString("exit code 2\n--- stdout ---\n")
	for i := 1; i <= 50000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	want.WriteString("--- stderr ---\n")
	for i := 1; i <= 60000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if full != strings.TrimSuffix(want.String(), "\n") {
		t.Errorf("spill file is %d bytes, want %d: both streams whole", len(full), want.Len()-1)
	}
	if !strings.HasSuffix(res.Text, "\n59999\n60000") {
		t.Errorf("preview tail %q", res.Text[len(res.Text)-40:])
	}
}

// BenchmarkShellHugeOutput runs a shell call printing 80 MB and reports
// the bytes allocated per call (B/op with -benchmem) and the peak heap in
// use during it (peak-heap-MB), sampled every millisecond.
func BenchmarkShellHugeOutput(b *testing.B) {
	var peak uint64
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b, nil) // a new turn each time: a whole spill budget
		stop := samplePeakHeap(&peak)
		b.StartTimer()
		res := e.run("shell", map[string]any{"command": hugeCommand(hugeOutput)})
		b.StopTimer()
		stop()
		if res.SpillPath == "" {
			b.Fatalf("no spill: %q", res.Text)
		}
		if err := os.RemoveAll(e.cfg.SpillDir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	b.SetBytes(hugeOutput)
}

// samplePeakHeap records in peak the largest heap in use (live and not yet
// swept objects) seen every millisecond until stop is called.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
