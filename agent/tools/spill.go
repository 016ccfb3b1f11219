package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// spiller hands a tool's result to the model, writing one that is over the
// inline limit to a spill file and giving the model its head and tail.
type spiller struct {
	tool   string
	dir    string
	limit  int
	ws     *workspace
	budget *spillBudget
	next   atomic.Int64 // the number tried first for the next spill file
}

func newSpiller(tool string, cfg Config, ws *workspace) *spiller {
	budget := cfg.budget
	if budget == nil {
		budget = newSpillBudget(cfg.SpillCap)
	}
	s := &spiller{tool: tool, dir: cfg.SpillDir, limit: cfg.InlineLimit, ws: ws, budget: budget}
	s.next.Store(1)
	return s
}

// spillBudget is what the tools of one turn (one All) may still write to
// spill files, shared by them all.
type spillBudget struct {
	cap  int64
	left atomic.Int64
}

func newSpillBudget(limit int64) *spillBudget {
	if limit <= 0 {
		limit = DefaultSpillCap
	}
	b := &spillBudget{cap: limit}
	b.left.Store(limit)
	return b
}

// take reserves up to n bytes and returns how many it got.
func (b *spillBudget) take(n int64) int64 {
	for {
		left := b.left.Load()
		got := min(n, left)
		if got <= 0 {
			return 0
		}
		if b.left.CompareAndSwap(left, left-got) {
			return got
		}
	}
}

// give returns n reserved bytes that were not written.
func (b *spillBudget) give(n int64) { b.left.Add(n) }

// capNote says why output was dropped, quoting the cap.
func (b *spillBudget) capNote() string {
	return fmt.Sprintf("this turn's spill files reached their cap of %d MiB", b.cap>>20)
}

// result returns text as a Result, spilling it first if it is longer than
// the inline limit. A text over the turn's spill cap is not written: the
// model gets its head and tail and a note saying the rest is lost. Only a
// spill file that cannot be written is an error.
func (s *spiller) result(text string, isError bool) (Result, error) {
	if len(text) <= s.limit {
		return Result{Text: text, IsError: isError}, nil
	}
	if got := s.budget.take(int64(len(text))); got < int64(len(text)) {
		s.budget.give(got)
		return Result{Text: previewOf(stringSource(text), s.droppedNote(), s.limit), IsError: isError}, nil
	}
	path, err := s.write(text)
	if err != nil {
		s.budget.give(int64(len(text)))
		return Result{}, err
	}
	shown := s.ws.display(path)
	return Result{Text: preview(text, shown, s.limit), IsError: isError, SpillPath: shown}, nil
}

// write stores text in a new file <tool>-<n>.txt of the spill folder and
// returns its path. An existing file is never overwritten: transcripts
// refer to spill files by path.
func (s *spiller) write(text string) (string, error) {
	f, path, err := s.create(".txt")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("tools: write spill file %s: %w", path, err)
	}
	return path, nil
}

// create makes a new, empty file <tool>-<n><suffix> in the spill folder,
// for the first n not taken, and returns it open for reading and writing
// with its path.
func (s *spiller) create(suffix string) (*os.File, string, error) {
	for {
		n := s.next.Add(1) - 1
		f, path, err := s.open(s.tool + "-" + strconv.FormatInt(n, 10) + suffix)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, path, err
	}
}

// open creates the file name in the spill folder, never following a link:
// the folders on the way are made real folders first (a link in place of
// grub's own folders is removed and replaced; see spillRoot), and the file
// is created exclusively, so neither a planted link nor an existing file is
// ever written through. An existing name is reported as fs.ErrExist.
func (s *spiller) open(name string) (*os.File, string, error) {
	root, rel, err := s.spillRoot()
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	path := filepath.Join(root.Name(), rel, name)
	f, err := root.OpenFile(filepath.Join(rel, name), os.O_RDWR|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("tools: create spill file %s: %w", path, err)
	}
	return f, path, nil
}

// spillRoot opens the folder the spill folder is made in (the workspace
// root when the spill folder lies inside it, its parent otherwise) as an
// os.Root, which refuses any path that escapes it through a link, and
// returns the spill folder's path relative to it, with every folder on the
// way created. A link standing where grub's own folders belong (.grub,
// .grub/<id>, the spill folder) is removed and a real folder made in its
// place; any other link on the way may lead only within the root.
func (s *spiller) spillRoot() (*os.Root, string, error) {
	if s.dir == "" || s.dir == "." {
		return nil, "", errors.New("tools: a result needs spilling but no spill folder is configured (Config.SpillDir)")
	}
	if err := s.ws.check(); err != nil {
		return nil, "", err
	}
	anchor, rel := s.ws.real, ""
	inside := false
	for _, r := range []string{s.ws.real, s.ws.root} {
		if r2, ok := within(r, filepath.Clean(s.dir)); ok && r2 != "." {
			rel, inside = r2, true
			break
		}
	}
	if !inside {
		anchor, rel = filepath.Dir(s.ws.spillReal), filepath.Base(s.ws.spillReal)
		if s.ws.spillReal == "" {
			return nil, "", fmt.Errorf("tools: the spill folder %s cannot be resolved", s.dir)
		}
		if err := os.MkdirAll(anchor, 0o755); err != nil {
			return nil, "", fmt.Errorf("tools: create the spill folder: %w", err)
		}
	}
	root, err := os.OpenRoot(anchor)
	if err != nil {
		return nil, "", fmt.Errorf("tools: open the spill folder's parent: %w", err)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		prefix := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		own := i == len(parts)-1 || (inside && s.ws.grubFolder(strings.Join(parts[:i+1], "/")))
		if err := realFolder(root, prefix, own); err != nil {
			root.Close()
			return nil, "", fmt.Errorf("tools: create the spill folder %s: %w", s.dir, err)
		}
	}
	return root, rel, nil
}

// realFolder makes sure name in root is a folder: it creates a missing one
// and, when own is set (a folder that belongs to grub), replaces a link
// with a real folder.
func realFolder(root *os.Root, name string, own bool) error {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case fi.IsDir():
		return nil
	case fi.Mode()&fs.ModeSymlink != 0 && own:
		if err := root.Remove(name); err != nil {
			return fmt.Errorf("remove the link %s: %w", name, err)
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil // os.Root follows it only where it stays inside
	default:
		return fmt.Errorf("%s is not a folder", name)
	}
	if err := root.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// droppedNote is the note on a result over the inline limit that was not
// saved because the spill cap was reached.
func (s *spiller) droppedNote() noteFunc {
	return func(total, lines int64) string {
		return fmt.Sprintf("[This output is %d bytes (%d lines), over the inline limit of %d bytes. "+
			"It was not saved to a file: %s, so what lies between its head and tail below is lost. "+
			"Run narrower commands (filter the output, or send it to a file in the workspace and grep that).]\n",
			total, lines, s.limit, s.budget.capNote())
	}
}

// noteFunc writes the note that opens a preview, from the text's size in
// bytes and lines.
type noteFunc func(total, lines int64) string

// spilledNote is the note on a result written to the spill file path.
func spilledNote(path string, limit int) noteFunc {
	return func(total, lines int64) string {
		return fmt.Sprintf("[This output is %d bytes (%d lines), over the inline limit of %d bytes. "+
			"The full text is in %s; read any part of it with read_file (offset and limit in lines). "+
			"Its head and tail follow.]\n", total, lines, limit, path)
	}
}

// preview is what the model sees of a spilled text: a note naming the
// spill file and the size, the head, a marker for what is left out and the
// tail, at most limit bytes together.
func preview(text, path string, limit int) string {
	return previewOf(stringSource(text), spilledNote(path, limit), limit)
}

// previewSource is a text too long to show whole: in memory, or in a
// spill file.
type previewSource interface {
	size() int64
	newlines() int64       // how many "\n" it holds
	endsWithNewline() bool // whether its last byte is "\n"
	head(n int) string     // its first n bytes, or all of it
	tail(n int) string     // its last n bytes, or all of it
}

// stringSource is a text in memory.
type stringSource string

func (s stringSource) size() int64           { return int64(len(s)) }
func (s stringSource) newlines() int64       { return int64(strings.Count(string(s), "\n")) }
func (s stringSource) endsWithNewline() bool { return strings.HasSuffix(string(s), "\n") }
func (s stringSource) head(n int) string     { return string(s[:min(n, len(s))]) }
func (s stringSource) tail(n int) string     { return string(s[len(s)-min(n, len(s)):]) }

// previewOf renders the note, the head of src, a marker for what is left
// out and its tail, at most limit bytes together.
func previewOf(src previewSource, note noteFunc, limit int) string {
	total := src.size()
	lines := src.newlines()
	if !src.endsWithNewline() {
		lines++
	}
	header := note(total, lines)
	// The marker is sized with the largest numbers it can hold.
	marker := func(omitted, tailLine int64) string {
		return fmt.Sprintf("\n[... %d bytes not shown; the tail below starts on line %d ...]\n", omitted, tailLine)
	}
	budget := limit - len(header) - len(marker(total, lines))
	if budget < 2 {
		// The limit is too small for any of the text: the note alone.
		return truncateBytes(header, limit)
	}
	// Given one byte more than they keep, cutHead and cutTail cut as they
	// would the whole text (a text they would keep whole comes whole).
	head := cutHead(src.head(budget/2+1), budget/2)
	tail := cutTail(src.tail(budget-len(head)+1), budget-len(head))
	tailLine := 1 + src.newlines() - int64(strings.Count(tail, "\n"))
	return header + head + marker(total-int64(len(head))-int64(len(tail)), tailLine) + tail
}

// cutHead returns a prefix of text of at most n bytes, ending on a line end
// when one lies in its second half and never inside a UTF-8 sequence.
func cutHead(text string, n int) string {
	if n >= len(text) {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	h := text[:n]
	if i := strings.LastIndexByte(h, '\n'); i >= n/2 {
		h = h[:i+1]
	}
	return h
}

// cutTail returns a suffix of text of at most n bytes, starting after a
// line end when one lies in its first half and never inside a UTF-8
// sequence.
func cutTail(text string, n int) string {
	if n >= len(text) {
		return text
	}
	start := len(text) - n
	for start < len(text) && !utf8.RuneStart(text[start]) {
		start++
	}
	t := text[start:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		t = t[i+1:]
	}
	return t
}

// truncateBytes cuts s to at most n bytes without splitting a rune.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
