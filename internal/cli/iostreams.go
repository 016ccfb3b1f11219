package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams bundles the standard streams a command uses. Data goes to Out,
// progress and diagnostics to ErrOut. Tests replace the streams with buffers
// via [TestIOStreams].
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// InTTY, OutTTY and ErrTTY report whether the stream is a terminal.
	InTTY, OutTTY, ErrTTY bool
	// ErrWidth returns the width of ErrOut's terminal in columns, 0 when
	// it is not a terminal or does not say; nil means 0.
	ErrWidth func() int
}

// System returns the process's real standard streams.
func System() *IOStreams {
	return &IOStreams{
		In:       os.Stdin,
		Out:      os.Stdout,
		ErrOut:   os.Stderr,
		InTTY:    isTerminal(os.Stdin),
		OutTTY:   isTerminal(os.Stdout),
		ErrTTY:   isTerminal(os.Stderr),
		ErrWidth: func() int { return termWidth(os.Stderr) },
	}
}

// TestIOStreams returns streams backed by buffers, none of them a terminal,
// and the buffers: stdin, stdout and stderr.
func TestIOStreams() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// termWidth is the width of f's terminal in columns; 0 when f is not a
// terminal. It is asked again at every redraw: the window may be resized.
func termWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}
