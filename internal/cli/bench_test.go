package cli

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/grub-dev/grub/bench/fixture"
	"github.com/grub-dev/grub/harness"
)

// BenchmarkStatusJSON2000 is grub status --json on a task of 2,000
// features with a 50 MB progress log (bench/status.sh compares the grub
// binary with jq on the same task).
func BenchmarkStatusJSON2000(b *testing.B) {
	benchStatusJSON(b, 2000, 1_000_000)
}

// benchStatusJSON runs status on a new task each time (a different goal,
// so a different list): schemas remembers the lists it found valid, and
// one grub status process meets its task's list for the first time.
func benchStatusJSON(b *testing.B, features int, logBytes int64) {
	var dirs, ids []string
	for i := range b.N {
		dir := b.TempDir()
		id, err := fixture.Write(dir, fixture.Options{Features: features, Passing: -1, LogBytes: logBytes,
			Goal: fmt.Sprintf("benchmark %d: leave one marker file per feature", i)})
		if err != nil {
			b.Fatal(err)
		}
		dirs, ids = append(dirs, dir), append(ids, id)
	}
	ios, _, _, _ := TestIOStreams()
	ios.Out = io.Discard
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		opts := &StatusOptions{IO: ios, Store: func() (*harness.Store, error) { return harness.Open(dirs[i]) },
			Now: time.Now, JSON: true, ID: ids[i]}
		if err := statusRun(opts); err != nil {
			b.Fatal(err)
		}
	}
}
