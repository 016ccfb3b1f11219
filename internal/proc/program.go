package proc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ShellQuote quotes s as one word for sh: in single quotes, where a single
// quote of s closes the quoting, is escaped with a backslash, and opens it
// again. The bytes of s are kept as they are.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// LookProgram finds the program called name. A name with a path separator
// names a file, relative to dir when dir is not empty (else to the working
// directory); any other name is looked up in PATH. The path returned is
// absolute whenever it has a separator, so that it names the same file
// from any directory the program later runs in.
//
// A program that cannot be found or run is exec.LookPath's *exec.Error,
// unchanged, so that callers can tell exec.ErrNotFound apart.
func LookProgram(name, dir string) (string, error) {
	if dir != "" && strings.ContainsRune(name, filepath.Separator) && !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	if strings.ContainsRune(path, filepath.Separator) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("%q: %w", path, err)
		}
		path = abs
	}
	return path, nil
}
