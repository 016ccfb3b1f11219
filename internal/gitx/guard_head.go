package gitx

import (
	"fmt"
	"strings"
)

// HEAD is written by git itself (checkout, switch, a rebase), so the
// guard does not compare its bytes: it checks what HEAD is. A regular
// file holding "ref: refs/heads/<branch>" or a commit id is what git
// writes; anything else (a link, a folder, a ref outside refs/heads/, a
// path that climbs out with "..", garbage) is a change, put back from the
// copy, since git reads HEAD to find the repository and a symbolic HEAD
// can lead it to files the agent chose.

// headSame reports whether HEAD, copied as was, is now have without a
// change that counts: still well formed, or exactly as it was.
func headSame(was, have guardEntry) bool {
	return was.same(have) || (have.kind == kindFile && validHead(have.data))
}

// describeHead names a change of HEAD that counts, or nothing.
func describeHead(name string, was, have guardEntry) []string {
	if headSame(was, have) {
		return nil
	}
	switch have.kind {
	case kindMissing:
		return []string{name + " was removed"}
	case kindBlocked:
		return []string{describeEntry(name, was, have)}
	case kindFile:
		line, _, _ := strings.Cut(string(have.data), "\n")
		return []string{fmt.Sprintf("%s now holds %s, which names no branch or commit", name, quote(firstN(line, 200)))}
	}
	return []string{fmt.Sprintf("%s was replaced by %s", name, strings.TrimPrefix(what(have), " as "))}
}

// validHead reports whether data is a HEAD git writes: a symbolic ref to a
// well-formed branch name, or a commit id (SHA-1 or SHA-256).
func validHead(data []byte) bool {
	s, ok := strings.CutSuffix(string(data), "\n")
	if !ok || strings.ContainsAny(s, "\n\r") {
		return false
	}
	if branch, ok := strings.CutPrefix(s, "ref: refs/heads/"); ok {
		return validBranch(branch)
	}
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validBranch is git's check-ref-format for the part after refs/heads/.
func validBranch(b string) bool {
	if b == "" || b == "@" || strings.HasPrefix(b, "-") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".") ||
		strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") || strings.ContainsAny(b, " ~^:?*[\\\x7f") {
		return false
	}
	for _, comp := range strings.Split(b, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// firstN is s cut to n bytes.
func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
