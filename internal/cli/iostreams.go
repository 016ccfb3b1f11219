package cli

import (
	"bytes"
	"io"
	"os"
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
}

// System returns the process's real standard streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
	}
}

// TestIOStreams returns streams backed by buffers, none of them a terminal,
// and the buffers: stdin, stdout and stderr.
func TestIOStreams() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// isTerminal reports whether f is a character device, the portable test the
// standard library allows without a terminal package.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}
