//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", "''"},
		{"/usr/bin/grub", "'/usr/bin/grub'"},
		{"it's", `'it'\''s'`},
		{"a b;$x", "'a b;$x'"},
		{"\xff", "'\xff'"},
	} {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Not parallel: it changes PATH and the working directory.
func TestLookProgram(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(bin))
	if got, err := LookProgram("tool", ""); err != nil || got != bin {
		t.Errorf("in PATH: %q, %v; want %q", got, err, bin)
	}
	if got, err := LookProgram(filepath.Join("bin", "tool"), dir); err != nil || got != bin {
		t.Errorf("relative to dir: %q, %v; want %q", got, err, bin)
	}
	t.Chdir(dir)
	if got, err := LookProgram(filepath.Join("bin", "tool"), ""); err != nil || got != bin {
		t.Errorf("relative to the working directory: %q, %v; want %q", got, err, bin)
	}
	_, err := LookProgram("no-such-tool", "")
	var notRun *exec.Error
	if !errors.As(err, &notRun) || !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing program: error %v, want exec's not-found error", err)
	}
}
