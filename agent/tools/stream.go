package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/grub-dev/grub/internal/proc"
)

// shellKeep is the most bytes of each stream of a shell command held in
// memory (its head and tail, through proc.Spec.MaxOutput); the rest goes
// straight to the spill file. It is at least twice the inline limit.
const shellKeep = 256 << 10

// shellSpill streams the output of one shell call to the spill folder as it
// arrives, so that grub's memory does not grow with what a command prints.
// A stream stays in memory while it is within the inline limit; past it,
// it goes to a part file next to the call's spill file <tool>-<n>.txt,
// within the turn's spill budget. Once the command is over, assemble writes
// the spill file in the format of a small result (exit code, then each
// stream) from the parts, and the model gets its head and tail.
type shellSpill struct {
	sp        *spiller
	threshold int
	stdout    *spillStream
	stderr    *spillStream

	mu    sync.Mutex // guards what follows: both streams' goroutines reserve
	final *os.File   // the spill file, reserved when a part is first needed
	path  string
	err   error // the first failure to write
}

func newShellSpill(sp *spiller) *shellSpill {
	c := &shellSpill{sp: sp, threshold: sp.limit}
	c.stdout = &spillStream{call: c, name: "stdout"}
	c.stderr = &spillStream{call: c, name: "stderr"}
	return c
}

// keep is the proc.Spec.MaxOutput for the call.
func (c *shellSpill) keep() int { return max(shellKeep, 2*c.sp.limit) }

// spilled reports whether some stream went to a part file.
func (c *shellSpill) spilled() bool { return c.stdout.f != nil || c.stderr.f != nil }

// capped reports whether some output was dropped at the spill cap.
func (c *shellSpill) capped() bool { return c.stdout.capped || c.stderr.capped }

// fail records the first write failure.
func (c *shellSpill) fail(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	return err
}

// partFile reserves the call's spill file if needed and creates the part
// file of stream name next to it.
func (c *shellSpill) partFile(name string) (*os.File, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.final == nil {
		f, path, err := c.sp.create(".txt")
		if err != nil {
			return nil, "", err
		}
		c.final, c.path = f, path
	}
	return c.sp.open(strings.TrimSuffix(filepath.Base(c.path), ".txt") + "." + name + ".part")
}

// cleanup removes the part files and, unless keepFinal, the spill file.
func (c *shellSpill) cleanup(keepFinal bool) {
	for _, st := range []*spillStream{c.stdout, c.stderr} {
		if st.f != nil {
			st.f.Close()
			os.Remove(st.path)
		}
	}
	if c.final != nil && !keepFinal {
		c.final.Close()
		os.Remove(c.path)
	}
}

// spillStream is one stream of a shell call: proc tees it here.
type spillStream struct {
	call   *shellSpill
	name   string
	mem    []byte   // the stream while it is within the threshold
	f      *os.File // its part file, past the threshold
	path   string
	saved  int64 // bytes in the part file
	last   byte  // the last byte saved
	total  int64 // bytes the command wrote
	capped bool  // bytes were dropped at the spill cap
}

// Write implements io.Writer. It fails only when a part file cannot be
// written; proc then stops teeing and keeps capturing.
func (s *spillStream) Write(p []byte) (int, error) {
	s.total += int64(len(p))
	if s.f == nil && !s.capped {
		if len(s.mem)+len(p) <= s.call.threshold {
			s.mem = append(s.mem, p...)
			return len(p), nil
		}
		if s.call.sp.budget.left.Load() <= 0 {
			s.capped = true // nothing more may be saved: mem stays the head
			return len(p), nil
		}
		f, path, err := s.call.partFile(s.name)
		if err != nil {
			return 0, s.call.fail(err)
		}
		s.f, s.path = f, path
		mem := s.mem
		s.mem = nil
		if err := s.save(mem); err != nil {
			return 0, err
		}
	}
	if err := s.save(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// save writes what the spill budget allows of p to the part file.
func (s *spillStream) save(p []byte) error {
	if s.capped || len(p) == 0 {
		s.capped = s.capped || len(p) > 0
		return nil
	}
	got := s.call.sp.budget.take(int64(len(p)))
	if got < int64(len(p)) {
		s.capped = true
	}
	if got == 0 {
		return nil
	}
	if _, err := s.f.Write(p[:got]); err != nil {
		return s.call.fail(fmt.Errorf("tools: write spill file %s: %w", s.path, err))
	}
	s.saved += got
	s.last = p[got-1]
	return nil
}

// assemble writes the spill file: prefix (the exit code line, or the
// timeout note, each ending in a line end), then a section per stream as
// formatShell renders it, the part files copied in and, for a stream cut
// at the spill cap, a note and the tail proc kept. Then it returns the
// result the model gets: a preview of the file.
func (c *shellSpill) assemble(prefix string, res proc.Result, isError bool) (Result, error) {
	if err := c.write(prefix, res); err != nil {
		c.cleanup(false)
		return Result{}, err
	}
	c.cleanup(true)
	defer c.final.Close()
	src, err := newFileSource(c.final)
	if err != nil {
		return Result{}, fmt.Errorf("tools: read back spill file %s: %w", c.path, err)
	}
	shown := c.sp.ws.display(c.path)
	return Result{Text: previewOf(src, spilledNote(shown, c.sp.limit), c.sp.limit), IsError: isError, SpillPath: shown}, nil
}

func (c *shellSpill) write(prefix string, res proc.Result) error {
	w := &lastByteWriter{w: c.final}
	if _, err := io.WriteString(w, prefix); err != nil {
		return fmt.Errorf("tools: write spill file %s: %w", c.path, err)
	}
	streams := []struct {
		st        *spillStream
		kept      []byte
		truncated bool
		cutAt     int
	}{
		{c.stdout, res.Stdout, res.StdoutTruncated, res.StdoutCutAt},
		{c.stderr, res.Stderr, res.StderrTruncated, res.StderrCutAt},
	}
	for _, s := range streams {
		st := s.st
		if st.total == 0 {
			continue
		}
		fmt.Fprintf(w, "--- %s ---\n", st.name)
		have := int64(len(st.mem)) // the head of the stream written so far
		if st.f == nil {
			w.Write(st.mem)
		} else if err := w.copyFile(st.f, st.saved, st.last); err != nil {
			return fmt.Errorf("tools: copy %s into spill file %s: %w", st.path, c.path, err)
		} else {
			have = st.saved
		}
		if st.capped {
			// The tail proc kept, past what was written.
			tail, tailStart := s.kept, int64(0)
			if s.truncated {
				tail = s.kept[s.cutAt:]
				tailStart = st.total - int64(len(tail))
			}
			if skip := have - tailStart; skip > 0 {
				tail = tail[min(skip, int64(len(tail))):]
				tailStart = have
			}
			if w.last != '\n' {
				w.Write([]byte{'\n'})
			}
			fmt.Fprintf(w, "[... %d bytes of %s dropped: %s ...]\n", tailStart-have, st.name, c.sp.budget.capNote())
			w.Write(tail)
		}
		if w.last != '\n' {
			w.Write([]byte{'\n'})
		}
	}
	if w.err != nil {
		return fmt.Errorf("tools: write spill file %s: %w", c.path, w.err)
	}
	// A small result ends without its last line end: so does the file.
	if err := c.final.Truncate(w.n - 1); err != nil {
		return fmt.Errorf("tools: write spill file %s: %w", c.path, err)
	}
	return nil
}

// lastByteWriter counts what it writes, remembers the last byte and keeps
// the first error, so that the writes above need no checks of their own.
type lastByteWriter struct {
	w    io.Writer
	n    int64
	last byte
	err  error
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	if n > 0 {
		l.last = p[n-1]
	}
	l.err = err
	return n, err
}

// copyFile appends the n bytes of part, ending in last, to the spill file
// (through copy_file_range where the system has it: no buffer in grub).
func (l *lastByteWriter) copyFile(part *os.File, n int64, last byte) error {
	if l.err != nil || n == 0 {
		return l.err
	}
	if _, err := part.Seek(0, io.SeekStart); err != nil {
		return err
	}
	dst, ok := l.w.(*os.File)
	if !ok {
		return errors.New("tools: the spill file is not a file")
	}
	k, err := dst.ReadFrom(io.LimitReader(part, n))
	l.n += k
	if err == nil && k != n {
		err = io.ErrShortWrite
	}
	l.last, l.err = last, err
	return err
}

// fileSource is a spill file read back for its preview: one pass counts its
// lines, and only the head and the tail are read.
type fileSource struct {
	f    *os.File
	n    int64
	nl   int64
	last byte
}

func newFileSource(f *os.File) (*fileSource, error) {
	s := &fileSource{f: f}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, s.n)
		s.nl += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if n > 0 {
			s.last = buf[n-1]
		}
		s.n += int64(n)
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (s *fileSource) size() int64           { return s.n }
func (s *fileSource) newlines() int64       { return s.nl }
func (s *fileSource) endsWithNewline() bool { return s.n > 0 && s.last == '\n' }
func (s *fileSource) head(n int) string     { return s.read(0, min(int64(n), s.n)) }
func (s *fileSource) tail(n int) string {
	k := min(int64(n), s.n)
	return s.read(s.n-k, k)
}

// read returns n bytes at off, with invalid UTF-8 replaced (a command may
// print anything; the model gets text).
func (s *fileSource) read(off, n int64) string {
	b := make([]byte, n)
	k, _ := s.f.ReadAt(b, off)
	return strings.ToValidUTF8(string(b[:k]), "\uFFFD")
}
