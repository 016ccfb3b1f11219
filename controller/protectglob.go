package controller

import (
	"fmt"
	"path"
	"strings"
)

// A protect pattern (--protect) is a slash-separated glob matched against
// a file's path relative to the workspace: path.Match's syntax in each
// segment, and "**" as a whole segment for any number of folders (none
// included), so "**/*_test.go" matches "a_test.go" and "x/y/a_test.go".
// A pattern without a slash matches the file's name in any folder, as
// .gitignore does.

// ValidProtect checks a protect pattern: not empty, relative, no "..",
// each segment a valid path.Match pattern.
func ValidProtect(pattern string) error {
	switch {
	case strings.TrimSpace(pattern) == "":
		return fmt.Errorf("--protect %q: give a glob, e.g. '**/*_test.go'", pattern)
	case strings.HasPrefix(pattern, "/"):
		return fmt.Errorf("--protect %q: give a path relative to the workspace, e.g. 'tests/**'", pattern)
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == ".." {
			return fmt.Errorf("--protect %q: the pattern may not leave the workspace (..)", pattern)
		}
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("--protect %q: %v", pattern, err)
		}
	}
	return nil
}

// matchProtect reports whether rel (slash-separated, relative to the
// workspace) matches pattern. An invalid pattern matches nothing.
func matchProtect(pattern, rel string) bool {
	pattern = strings.TrimPrefix(pattern, "./")
	if !strings.Contains(pattern, "/") {
		pattern = "**/" + pattern
	}
	return matchSegments(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for len(rest) > 0 && rest[0] == "**" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return len(name) > 0
			}
			for i := range name {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
