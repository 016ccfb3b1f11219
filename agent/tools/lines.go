package tools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// binarySniff is how many leading bytes are checked for a NUL byte to tell
// a binary file from a text file, as git and grep do.
const binarySniff = 8000

// lineReader reads a text line by line, keeping at most keep bytes of each
// line, so that a huge line (minified code, a data dump) costs no more
// memory than a short one.
type lineReader struct {
	r    *bufio.Reader
	keep int
	buf  []byte
}

func newLineReader(r io.Reader, keep int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), keep: keep}
}

// looksBinary reports whether the text starts with a NUL byte in its first
// binarySniff bytes. It does not consume anything.
func (l *lineReader) looksBinary() (bool, error) {
	head, err := l.r.Peek(binarySniff)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return false, err
	}
	return bytes.IndexByte(head, 0) >= 0, nil
}

// next returns the next line without its "\n", at most keep bytes of it,
// and the line's full length in bytes. It returns io.EOF when the text is
// exhausted; a last line without "\n" is still a line. The returned slice
// is valid until the next call.
func (l *lineReader) next() (line []byte, full int, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		full += len(chunk)
		if room := l.keep - len(l.buf); room > 0 {
			l.buf = append(l.buf, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(l.buf, []byte("\n")), full - 1, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if full == 0 {
				return nil, 0, io.EOF
			}
			return l.buf, full, nil
		default:
			return nil, 0, err
		}
	}
}

// clipLine renders one line for the model: valid UTF-8, cut at maxChars
// characters with a note giving its full length when it is longer (or was
// already cut by the reader, which kept less than full bytes).
func clipLine(b []byte, full, maxChars int) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	cut := len(b) < full
	if utf8.RuneCountInString(s) > maxChars {
		i, n := 0, 0
		for i < len(s) && n < maxChars {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
		}
		s, cut = s[:i], true
	}
	if cut {
		s += fmt.Sprintf(" [… line cut at %d characters; it is %d bytes long]", maxChars, full)
	}
	return s
}
