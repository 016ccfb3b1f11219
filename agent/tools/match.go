package tools

import (
	"path"
	"strings"
)

// globPattern is a slash-separated pattern whose segments are path.Match
// patterns, where a segment "**" matches any number of path segments
// (none included).
type globPattern []string

// parseGlob checks and splits a pattern relative to the folder it is
// applied in. An absolute pattern, a ".." segment and a malformed segment
// are model mistakes.
func parseGlob(param, pattern string) (globPattern, error) {
	p := strings.TrimPrefix(pattern, "./")
	switch {
	case strings.TrimSpace(p) == "":
		return nil, mistakef("%s is empty; give a pattern such as \"**/*.go\"", param)
	case strings.HasPrefix(p, "/"):
		return nil, mistakef("%s %q is absolute; patterns are relative to the folder searched (set path to choose the folder)", param, pattern)
	}
	var segs globPattern
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, mistakef("%s %q has a \"..\" segment; patterns cannot leave the folder searched", param, pattern)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, mistakef("%s %q is malformed near %q (%v); use *, ?, [abc] and ** (any number of folders)", param, pattern, s, err)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return nil, mistakef("%s %q matches nothing; give a pattern such as \"**/*.go\"", param, pattern)
	}
	return segs, nil
}

// match reports whether the path segments name match the pattern.
func (g globPattern) match(name []string) bool {
	if len(g) == 0 {
		return len(name) == 0
	}
	if g[0] == "**" {
		return g[1:].match(name) || (len(name) > 0 && g.match(name[1:]))
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(g[0], name[0])
	return ok && g[1:].match(name[1:])
}

// mayMatchUnder reports whether some path under the folder with segments
// dir could match, so that a walk can skip folders that cannot.
func (g globPattern) mayMatchUnder(dir []string) bool {
	if len(dir) == 0 {
		return len(g) > 0
	}
	if len(g) == 0 {
		return false
	}
	if g[0] == "**" {
		return true
	}
	ok, _ := path.Match(g[0], dir[0])
	return ok && g[1:].mayMatchUnder(dir[1:])
}
