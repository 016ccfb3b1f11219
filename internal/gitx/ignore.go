package gitx

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignores holds the patterns that apply everywhere in the work tree, in
// increasing priority: core.excludesFile (or the default
// $XDG_CONFIG_HOME/git/ignore), then .git/info/exclude. The .gitignore
// files of each folder are read during the walk and stacked on top.
type ignores struct {
	base []gitignore.Pattern
}

// loadIgnores reads the global excludes file and .git/info/exclude. A
// missing file is no error; an unreadable one is.
func loadIgnores(cfg *gitConfig, gitDir billy.Filesystem) (*ignores, error) {
	ig := &ignores{}
	if path := excludesPath(cfg); path != "" {
		data, err := os.ReadFile(path)
		if err != nil && !isNotExist(err) {
			return nil, fmt.Errorf("read the excludes file %s (core.excludesFile): %w", path, err)
		}
		ig.base = append(ig.base, parsePatterns(data, nil)...)
	}
	if gitDir != nil {
		f, err := gitDir.Open(gitDir.Join("info", "exclude"))
		switch {
		case err == nil:
			data, rerr := io.ReadAll(f)
			f.Close()
			if rerr != nil {
				return nil, fmt.Errorf("read .git/info/exclude: %w", rerr)
			}
			ig.base = append(ig.base, parsePatterns(data, nil)...)
		case !isNotExist(err):
			return nil, fmt.Errorf("read .git/info/exclude: %w", err)
		}
	}
	return ig, nil
}

// excludesPath is the global excludes file: core.excludesFile (a
// leading ~/ is the home folder), else $XDG_CONFIG_HOME/git/ignore or
// ~/.config/git/ignore; "" when none can be named.
func excludesPath(cfg *gitConfig) string {
	path := cfg.get("core", "excludesfile")
	if path == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			path = filepath.Join(xdg, "git", "ignore")
		} else if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".config", "git", "ignore")
		}
	} else if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	return path
}

// parsePatterns parses the lines of an ignore file found in the folder
// domain (path components from the work tree root).
func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// readGitignore returns the patterns of dir/.gitignore (nil when absent).
func readGitignore(dir string, domain []string) ([]gitignore.Pattern, error) {
	path := filepath.Join(dir, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parsePatterns(data, domain), nil
}

// matchIgnored applies the patterns last to first, as git does: the last
// pattern that matches decides, and a negated one ("!x") re-includes.
func matchIgnored(ps []gitignore.Pattern, path []string, isDir bool) bool {
	for i := len(ps) - 1; i >= 0; i-- {
		switch ps[i].Match(path, isDir) {
		case gitignore.Exclude:
			return true
		case gitignore.Include:
			return false
		}
	}
	return false
}

// patternsAbove returns the patterns in force for the entries of the folder
// comps before its own .gitignore is read: the base ones plus the
// .gitignore of every folder above it.
func (ig *ignores) patternsAbove(root string, comps []string) ([]gitignore.Pattern, error) {
	ps := append([]gitignore.Pattern(nil), ig.base...)
	for i := 0; i < len(comps); i++ {
		more, err := readGitignore(filepath.Join(root, filepath.Join(comps[:i]...)), comps[:i])
		if err != nil {
			return nil, err
		}
		ps = append(ps, more...)
	}
	return ps, nil
}

// pathIgnored reports whether the folder comps, or one of its parents, is
// ignored. A .gitignore that cannot be read counts as no pattern here; the
// walk reports it.
func (ig *ignores) pathIgnored(root string, comps []string) bool {
	ps := append([]gitignore.Pattern(nil), ig.base...)
	for i := 1; i <= len(comps); i++ {
		more, _ := readGitignore(filepath.Join(root, filepath.Join(comps[:i-1]...)), comps[:i-1])
		ps = append(ps, more...)
		if matchIgnored(ps, comps[:i], true) {
			return true
		}
	}
	return false
}
