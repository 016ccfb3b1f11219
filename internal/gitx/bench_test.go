package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The size of the benchmark tree (benchFiles).
const (
	benchTracked = 10_000
	benchIgnored = 10_000
)

// benchFiles is the benchmark tree: 10,000 tracked files of about 200
// bytes in 100 folders of two levels, and an ignored node_modules of
// 10,000 files that a careless walk would read.
func benchFiles() map[string]string {
	line := strings.Repeat("x", 190) + "\n"
	files := map[string]string{".gitignore": "node_modules/\n"}
	for i := range benchTracked {
		files[fmt.Sprintf("src/d%02d/p%d/f%04d.go", i%10, i/10%10, i)] = fmt.Sprintf("// %d\n%s", i, line)
	}
	for i := range benchIgnored {
		files[fmt.Sprintf("node_modules/m%03d/f%04d.js", i%100, i)] = line
	}
	return files
}

// benchEdit changes one tracked file, different in every iteration.
func benchEdit(b *testing.B, dir string, i int) {
	b.Helper()
	n := i % benchTracked
	p := filepath.Join(dir, fmt.Sprintf("src/d%02d/p%d/f%04d.go", n%10, n/10%10, n))
	if err := os.WriteFile(p, []byte(fmt.Sprintf("// edit %d at %d\n", i, time.Now().UnixNano())), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCommitTurn10k is a turn commit with gitx: one file changed in a
// repository of 10,000 tracked files.
func BenchmarkCommitTurn10k(b *testing.B) {
	dir, r := committedRepo(b, benchFiles())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchEdit(b, dir, i)
		if _, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: i + 1, Summary: "bench", Status: "running"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitCLICommit10k is the same with `git add -A && git commit`.
func BenchmarkGitCLICommit10k(b *testing.B) {
	run := gitBin(b)
	dir := gitCommittedRepo(b, run, benchFiles())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchEdit(b, dir, i)
		run(dir, "add", "-A")
		run(dir, "commit", "-q", "-m", "bench")
	}
}

// BenchmarkGoGitWorktreeCommit10k is what gitx avoids: go-git's own
// AddWithOptions(All) and Worktree.Commit, for comparison.
func BenchmarkGoGitWorktreeCommit10k(b *testing.B) {
	dir := initRepo(b)
	write(b, dir, benchFiles())
	g, err := git.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	w, err := g.Worktree()
	if err != nil {
		b.Fatal(err)
	}
	sig := &object.Signature{Name: "Bench", Email: "bench@example.com", When: time.Now()}
	commit := func(msg string) {
		if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Commit(msg, &git.CommitOptions{Author: sig, AllowEmptyCommits: true}); err != nil {
			b.Fatal(err)
		}
	}
	commit("initial")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchEdit(b, dir, i)
		commit("bench")
	}
}

// BenchmarkTreeHash10k is the controller's change check before and after
// a turn.
func BenchmarkTreeHash10k(b *testing.B) {
	dir, r := committedRepo(b, benchFiles())
	benchEdit(b, dir, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.TreeHash(".grub"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirty10k is `grub start`'s clean-tree check.
func BenchmarkDirty10k(b *testing.B) {
	dir, r := committedRepo(b, benchFiles())
	benchEdit(b, dir, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d, err := r.Dirty(); err != nil || len(d) != 1 {
			b.Fatal(d, err)
		}
	}
}

// BenchmarkTurnGitWork is gitx's share of one grub turn in a task of
// about 2,000 features (internal/cli's BenchmarkTurn, features=2000): a
// work tree of 1,000 small files plus a task folder whose feature list
// and state (about 750 KB each) change every turn, one new file; the
// guard's copy before the turn and its two checks after, the change
// token before and after the agent, and the turn commit.
func BenchmarkTurnGitWork(b *testing.B) {
	files := map[string]string{".gitignore": "node_modules/\n"}
	for i := range 1000 {
		files[fmt.Sprintf("src/d%02d/f%04d.txt", i%20, i)] = fmt.Sprintf("feature %d\n", i)
	}
	run := gitBin(b) // git init: the hooks folder holds git's samples
	dir := b.TempDir()
	run(dir, "init", "-q")
	write(b, dir, files)
	r := mustOpen(b, dir)
	if _, err := r.InitialCommit(context.Background(), "initial"); err != nil {
		b.Fatal(err)
	}
	r = r.WithHarness(HarnessFiles{Dir: ".grub", Tracked: []string{"state.json", "feature-list.json"}})
	big := func(i int, tag string) string {
		return strings.Repeat(fmt.Sprintf(`{"id": "f-%s-%d", "passes": false},`+"\n", tag, i), 20_000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		guard, err := r.GuardGitDir()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.TreeHash(".grub"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer() // the agent's and the harness's writes
		write(b, dir, map[string]string{
			fmt.Sprintf("done/f%05d.txt", i):   "done\n",
			".grub/ab12cd34/feature-list.json": big(i, "list"),
			".grub/ab12cd34/state.json":        big(i, "state"),
		})
		b.StartTimer()
		for range 2 {
			if changes, err := guard.Check(); err != nil || len(changes) > 0 {
				b.Fatal(changes, err)
			}
		}
		if _, err := r.TreeHash(".grub"); err != nil {
			b.Fatal(err)
		}
		if _, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: i + 1, Summary: "bench", Status: "running"}); err != nil {
			b.Fatal(err)
		}
	}
}
