package proc

import (
	"bytes"
	"context"
	"math/rand"
	"strings"
	"testing"
)

// TestCaptureKeepsHeadAndTail writes random chunks and checks the capture
// against the naive answer: everything while it fits, else the first
// max-max/2 bytes and the last max/2.
func TestCaptureKeepsHeadAndTail(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 300 {
		max := 1 + rng.Intn(64)
		c := &capture{max: max, tail: newTailBuffer(16)}
		var all []byte
		for range rng.Intn(12) {
			p := make([]byte, rng.Intn(40))
			rng.Read(p)
			all = append(all, p...)
			if n, err := c.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		got, truncated, cutAt := c.result()
		want, wantCut := all, 0
		if len(all) > max {
			head := max - max/2
			want = append(append([]byte(nil), all[:head]...), all[len(all)-max/2:]...)
			wantCut = head
		}
		if !bytes.Equal(got, want) || truncated != (len(all) > max) || cutAt != wantCut || c.total != int64(len(all)) {
			t.Fatalf("trial %d (max %d, %d bytes): got %d bytes cut at %d (truncated %v), want %d cut at %d",
				trial, max, len(all), len(got), cutAt, truncated, len(want), wantCut)
		}
		wantTail := all[len(all)-min(len(all), 16):]
		if tail := c.tail.bytes(); !bytes.Equal(tail, wantTail) {
			t.Fatalf("trial %d: tail %q, want %q", trial, tail, wantTail)
		}
	}
}

// TestRunKeepsTheLastWords runs a command whose decisive line comes after
// far more output than is kept: the line survives, and the cut is marked.
func TestRunKeepsTheLastWords(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), Spec{
		Command:   `head -c 3000000 /dev/zero | tr '\0' x; echo; echo FINAL-DECISION`,
		MaxOutput: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.StdoutTruncated || res.StdoutBytes != int64(3000000+1+len("FINAL-DECISION\n")) {
		t.Fatalf("truncated %v, %d bytes", res.StdoutTruncated, res.StdoutBytes)
	}
	if len(res.Stdout) != 1<<20 || res.StdoutCutAt != 1<<19 {
		t.Fatalf("kept %d bytes cut at %d", len(res.Stdout), res.StdoutCutAt)
	}
	if !strings.HasSuffix(string(res.Stdout), "\nFINAL-DECISION\n") {
		t.Fatalf("the end of the output was lost: ...%q", res.Stdout[len(res.Stdout)-40:])
	}
}
