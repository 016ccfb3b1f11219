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
	tool  string
	dir   string
	limit int
	ws    *workspace
	next  atomic.Int64 // the number tried first for the next spill file
}

func newSpiller(tool string, cfg Config, ws *workspace) *spiller {
	s := &spiller{tool: tool, dir: cfg.SpillDir, limit: cfg.InlineLimit, ws: ws}
	s.next.Store(1)
	return s
}

// result returns text as a Result, spilling it first if it is longer than
// the inline limit. Only a spill file that cannot be written is an error.
func (s *spiller) result(text string, isError bool) (Result, error) {
	if len(text) <= s.limit {
		return Result{Text: text, IsError: isError}, nil
	}
	path, err := s.write(text)
	if err != nil {
		return Result{}, err
	}
	shown := s.ws.display(path)
	return Result{Text: preview(text, shown, s.limit), IsError: isError, SpillPath: shown}, nil
}

// write stores text in a new file <tool>-<n>.txt of the spill folder and
// returns its path with symlinks resolved. An existing file is never
// overwritten: transcripts refer to spill files by path.
func (s *spiller) write(text string) (string, error) {
	if s.dir == "" || s.dir == "." {
		return "", errors.New("tools: a result needs spilling but no spill folder is configured (Config.SpillDir)")
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return "", fmt.Errorf("tools: create the spill folder: %w", err)
	}
	for {
		n := s.next.Add(1) - 1
		path := filepath.Join(s.dir, s.tool+"-"+strconv.FormatInt(n, 10)+".txt")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("tools: create spill file: %w", err)
		}
		_, werr := f.WriteString(text)
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(path)
			return "", fmt.Errorf("tools: write spill file %s: %w", path, err)
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		return path, nil
	}
}

// preview is what the model sees of a spilled text: a note naming the
// spill file and the size, the head, a marker for what is left out and the
// tail, at most limit bytes together.
func preview(text, path string, limit int) string {
	total := len(text)
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	header := fmt.Sprintf("[This output is %d bytes (%d lines), over the inline limit of %d bytes. "+
		"The full text is in %s; read any part of it with read_file (offset and limit in lines). "+
		"Its head and tail follow.]\n", total, lines, limit, path)
	// The marker is sized with the largest numbers it can hold.
	marker := func(omitted, tailLine int) string {
		return fmt.Sprintf("\n[... %d bytes not shown; the tail below starts on line %d ...]\n", omitted, tailLine)
	}
	budget := limit - len(header) - len(marker(total, lines))
	if budget < 2 {
		// The limit is too small for any of the text: the note alone.
		return truncateBytes(header, limit)
	}
	head := cutHead(text, budget/2)
	tail := cutTail(text, budget-len(head))
	tailLine := 1 + strings.Count(text[:total-len(tail)], "\n")
	return header + head + marker(total-len(head)-len(tail), tailLine) + tail
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
