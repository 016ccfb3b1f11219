package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/grub-dev/grub/internal/termsafe"
)

// Turn describes one finished turn for CommitTurn.
type Turn struct {
	TaskID    string
	Iteration int
	Feature   string // may be empty (initializer turns)
	Summary   string // the agent's summary; may be long or span lines
	Status    string // the task status after the turn
	// Verified is the feature whose flip the referee verified and
	// accepted in the turn (the Grub-Verified trailer); "" for none.
	Verified string
	When     time.Time
	// CostUSD is what the provider charged for the turn, written as the
	// Grub-Cost trailer when the backend reported it (CostReported).
	CostUSD      float64
	CostReported bool
}

// Trailer keys of a turn commit. History reads them back.
const (
	TrailerTask      = "Grub-Task"
	TrailerIteration = "Grub-Iteration"
	TrailerFeature   = "Grub-Feature"
	TrailerStatus    = "Grub-Status"
	TrailerVerified  = "Grub-Verified" // the feature whose flip grub verified in the turn
	TrailerCost      = "Grub-Cost"     // US dollars, a plain decimal: 0.0123
)

// MaxFileSize is the largest file a commit takes in: a bigger one (a
// dataset, a build artefact, a core dump the agent left) is left out of
// the commit and stays in the work tree, and the commit reports it
// (Committed.LeftOut). A tracked file keeps the version last committed.
const MaxFileSize = 50 << 20

// Committed is what a commit made.
type Committed struct {
	Hash    string    // the new commit's full hash
	LeftOut []LeftOut // files not committed because they are over MaxFileSize, sorted by path
}

// LeftOut is a file a commit left out.
type LeftOut struct {
	Path string // relative to the workspace, slash-separated
	Size int64  // its size in bytes
}

// subjectWidth is the longest first line of a turn commit, in characters.
const subjectWidth = 72

// lockWait is how long a commit waits for another git process to release
// .git/index.lock (an editor's background `git status`, say).
var lockWait = 5 * time.Second

// CommitTurn stages the workspace as `git add -A .` would (respecting
// .gitignore files at every level, .git/info/exclude and the global
// excludes file; deleted files leave the index) and commits it on the
// current branch with the turn's message and trailers. It commits even when
// nothing changed, so that every turn has exactly one commit. It works on a
// repository without commits (the commit then has no parent), never moves
// any other reference, and never pushes, resets, rebases or amends. It
// returns the new commit's full hash.
//
// A file over MaxFileSize is left out and listed in the result.
//
// The author and committer come from the environment and git config (see
// identity), else "grub <grub@localhost>"; both are dated t.When (now when
// zero).
func (r *Repo) CommitTurn(ctx context.Context, t Turn) (Committed, error) {
	when := t.When
	if when.IsZero() {
		when = time.Now()
	}
	return r.commit(ctx, TurnMessage(t), when, false)
}

// InitialCommit makes the first commit of a repository that has none: the
// workspace as it is, with msg as the message. `grub start` calls it so
// that the first turn's commit shows only the turn's changes. It returns
// ErrHasCommits when HEAD already names a commit. Files over MaxFileSize
// are left out, as in CommitTurn.
func (r *Repo) InitialCommit(ctx context.Context, msg string) (Committed, error) {
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	return r.commit(ctx, msg, time.Now(), true)
}

// TurnMessage is the commit message of a turn:
//
//	grub(<id>) #<n> <feature>: <summary>
//
//	<the full summary, when the first line had to shorten it>
//
//	Grub-Task: <id>
//	Grub-Iteration: <n>
//	Grub-Feature: <feature>
//	Grub-Status: <status>
//	Grub-Verified: <feature whose flip grub verified>
//	Grub-Cost: <US dollars>
//
// The feature and its trailer are left out when empty, Grub-Verified when
// the turn flipped nothing, the cost when the backend reported none. Control characters
// in the agent's text are escaped (termsafe): on one line in the subject
// and the trailers, with newlines and tabs kept in the body.
func TurnMessage(t Turn) string {
	id, feature, status := oneLine(t.TaskID), oneLine(t.Feature), oneLine(t.Status)
	summary := termsafe.Escape(strings.TrimSpace(t.Summary))
	subject := fmt.Sprintf("grub(%s) #%d", id, t.Iteration)
	if feature != "" {
		subject += " " + feature
	}
	full := false
	if summary != "" {
		raw, _, multi := strings.Cut(summary, "\n")
		first := oneLine(raw)
		room := subjectWidth - len([]rune(subject)) - 2
		if room < 20 {
			room = 20
		}
		short := first
		if r := []rune(first); len(r) > room {
			short = strings.TrimRight(string(r[:room-1]), " ") + "…"
		}
		subject += ": " + short
		// The body holds the summary whenever the subject cannot: cut,
		// several lines, or whitespace the subject line folds.
		full = multi || short != raw
	}
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	if full {
		b.WriteString(summary)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "%s: %s\n%s: %d\n", TrailerTask, id, TrailerIteration, t.Iteration)
	if feature != "" {
		fmt.Fprintf(&b, "%s: %s\n", TrailerFeature, feature)
	}
	fmt.Fprintf(&b, "%s: %s\n", TrailerStatus, status)
	if v := oneLine(t.Verified); v != "" {
		fmt.Fprintf(&b, "%s: %s\n", TrailerVerified, v)
	}
	if t.CostReported {
		fmt.Fprintf(&b, "%s: %s\n", TrailerCost, strconv.FormatFloat(t.CostUSD, 'f', -1, 64))
	}
	return b.String()
}

// oneLine folds whitespace runs (newlines included) into single spaces and
// escapes control characters.
func oneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// commit stages the workspace and commits it on the current branch, all
// under .git/index.lock. With initial it refuses a repository whose HEAD
// already names a commit.
func (r *Repo) commit(ctx context.Context, msg string, when time.Time, initial bool) (Committed, error) {
	w, err := r.openWorkTree()
	if err != nil {
		return Committed{}, err
	}
	lock, err := lockIndex(ctx, w.st)
	if err != nil {
		return Committed{}, err
	}
	defer lock.release()

	refName, parent, err := headTarget(w.g)
	if err != nil {
		return Committed{}, err
	}
	if initial && !parent.IsZero() {
		return Committed{}, fmt.Errorf("%s: %w", r.root, ErrHasCommits)
	}
	old, err := w.readIndex()
	if err != nil {
		return Committed{}, err
	}
	next, tree, tooBig, err := r.stage(ctx, w, old, parent)
	if err != nil {
		return Committed{}, err
	}
	var done Committed
	for _, f := range tooBig {
		done.LeftOut = append(done.LeftOut, LeftOut{Path: r.rel(f.Path), Size: f.Size})
	}
	sort.Slice(done.LeftOut, func(i, j int) bool { return done.LeftOut[i].Path < done.LeftOut[j].Path })
	c := &object.Commit{
		Author:    w.cfg.identity("author", when),
		Committer: w.cfg.identity("committer", when),
		Message:   msg,
		TreeHash:  tree,
	}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	sync := w.cfg.fsyncs()
	lock.sync = sync.index
	// The index is written before the branch moves: a kill in between
	// leaves the turn uncommitted (the next run commits it) with the index
	// already right, never a commit on the branch with the index of the
	// turn before (a finished task would show its files as changed).
	index := indexSwap{write: func() error { return lock.writeIndex(next) }, undo: func() { _ = lock.writeIndex(old) }}
	hash, err := writeCommit(ctx, w.st, refName, parent, c, sync.ref, index)
	if err != nil {
		return Committed{}, err
	}
	done.Hash = hash.String()
	return done, nil
}

// beforeRefMove, when a test sets it, runs between the index write and the
// branch's move; an error it returns fails the commit there.
var beforeRefMove func() error

// indexSwap writes the index a commit stages, and puts the one before
// back when the branch cannot be moved.
type indexSwap struct {
	write func() error
	undo  func()
}

// stage does what `git add -A .` in the workspace does, without writing
// .git/index: it scans the workspace, writes the blobs and trees that are
// new, and returns the index to write once the commit is made and the tree
// to commit, and the files left out for their size (repository paths).
// idx is .git/index as read under the lock; parent is the commit the
// branch points to (zero: none). The caller holds the index lock.
func (r *Repo) stage(ctx context.Context, w *workTree, idx *index.Index, parent plumbing.Hash) (*index.Index, plumbing.Hash, []LeftOut, error) {
	sc := newScanner(ctx, r, idx, w.cfg, w.st, nil)
	if len(sc.unmerged) > 0 {
		return nil, plumbing.ZeroHash, nil, fmt.Errorf("the git index has unmerged paths (%s): resolve the merge conflict with git, then run grub again", strings.Join(capList(sc.unmerged, 5), ", "))
	}
	entries, err := sc.scan(r, w.ign)
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	tree, err := r.writeTree(w.st, entries, parent)
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	return r.nextIndex(idx, entries), tree, sc.tooBig, nil
}

// nextIndex is the index after staging: the workspace's entries as
// scanned, the entries outside the workspace as they were in idx.
func (r *Repo) nextIndex(idx *index.Index, entries []*index.Entry) *index.Index {
	next := &index.Index{Version: idx.Version}
	if next.Version < 2 || next.Version > 4 {
		next.Version = 2
	}
	for _, e := range idx.Entries {
		if !r.inScope(e.Name) {
			next.Entries = append(next.Entries, e)
		}
	}
	next.Entries = append(next.Entries, entries...)
	for _, e := range next.Entries {
		if (e.IntentToAdd || e.SkipWorktree) && next.Version < 3 {
			next.Version = 3
		}
	}
	return next
}

// writeTree writes the tree of the workspace's entries and returns the
// tree to commit: that tree when the workspace is the top folder, else
// parent's tree (zero: none) with the workspace's folder replaced by it.
func (r *Repo) writeTree(st *filesystem.Storage, entries []*index.Entry, parent plumbing.Hash) (plumbing.Hash, error) {
	tw := treeWriter{store: st}
	tree, err := tw.build(entries, r.relStart())
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if r.prefix == "" {
		return tree, nil
	}
	base, err := headCommitTree(st, parent)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return tw.replace(st, base, r.prefixComps(), tree)
}

// writeCommit stores c, writes the staged index (index.write) and moves
// ref from parent (zero: ref does not exist yet) to c, unless ctx is done
// or another git command moved ref meanwhile (then the index before is put
// back: index.undo); then it records the commit in the reflog. syncRef
// flushes the ref before it is renamed into place (setRef).
func writeCommit(ctx context.Context, st *filesystem.Storage, ref plumbing.ReferenceName, parent plumbing.Hash, c *object.Commit, syncRef bool, index indexSwap) (plumbing.Hash, error) {
	o := &plumbing.MemoryObject{}
	if err := c.Encode(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode the commit: %w", err)
	}
	hash, err := putObject(st, o)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write the commit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := index.write(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write the git index (.git/index): %w; run `git status` to rebuild it", err)
	}
	if beforeRefMove != nil {
		if err := beforeRefMove(); err != nil {
			index.undo()
			return plumbing.ZeroHash, err
		}
	}
	if err := setRef(st, ref, parent, hash, syncRef); err != nil {
		index.undo()
		return plumbing.ZeroHash, fmt.Errorf("move %s to the new commit: %w (did another git command commit meanwhile? run grub again)", ref, err)
	}
	appendReflog(st, ref, parent, hash, c.Committer, c.Message)
	return hash, nil
}

func capList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), fmt.Sprintf("and %d more", len(xs)-n))
}

// headTarget returns the reference a commit moves (the branch HEAD is on,
// or HEAD itself when detached) and the commit it points to (zero on a
// branch without commits).
func headTarget(g *git.Repository) (plumbing.ReferenceName, plumbing.Hash, error) {
	head, err := g.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	if head.Type() == plumbing.HashReference {
		return plumbing.HEAD, head.Hash(), nil
	}
	name := head.Target()
	ref, err := g.Storer.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return name, plumbing.ZeroHash, nil
	}
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("read %s: %w", name, err)
	}
	return name, ref.Hash(), nil
}

// appendReflog records the commit in logs/HEAD and the branch's log, as
// git commit does, so that `git reflog` shows grub's commits. It is best
// effort: the commit is made, and a missing reflog line loses nothing.
func appendReflog(st *filesystem.Storage, ref plumbing.ReferenceName, old, new plumbing.Hash, who object.Signature, msg string) {
	subject, _, _ := strings.Cut(msg, "\n")
	kind := "commit"
	if old.IsZero() {
		kind = "commit (initial)"
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s: %s\n", old, new, who.Name, who.Email,
		who.When.Unix(), who.When.Format("-0700"), kind, subject)
	names := []string{"HEAD"}
	if ref != plumbing.HEAD {
		names = append(names, ref.String())
	}
	fs := st.Filesystem()
	for _, n := range names {
		p := fs.Join("logs", n)
		if err := fs.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			continue
		}
		f, err := fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
		if err != nil {
			continue
		}
		_, _ = f.Write([]byte(line))
		f.Close()
	}
}
