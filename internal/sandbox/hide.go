package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Credentials are the places under a home folder where tools keep
// credentials, which the launcher hides from every sandboxed command
// (Policy.Hide, through CredentialPaths): SSH keys, the AWS, Azure and
// Google Cloud command lines, GitHub's gh, Kubernetes, Docker's registry
// logins, GnuPG, .netrc, git's credential store, npm's and PyPI's tokens,
// cargo's registry tokens, and grub's own configuration folder (its
// defaults and its list of trusted workspaces). The last element of an
// entry may be a pattern. Claude Code's and the Codex CLI's folders are
// not in the list: those agents read their own keys there.
var Credentials = []string{
	".ssh", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube",
	".docker/config.json", ".gnupg", ".netrc", ".git-credentials", ".npmrc",
	".pypirc", ".cargo/credentials*", ".config/grub",
}

// CredentialPaths returns Credentials under each of homes (the empty
// and relative ones skipped), cleaned, without duplicates: Policy.Hide's
// defaults.
func CredentialPaths(homes ...string) []string {
	var out []string
	for _, h := range homes {
		if h == "" || !filepath.IsAbs(h) {
			continue
		}
		for _, c := range Credentials {
			if p := filepath.Join(h, c); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// masks is what the launcher covers for p: every path of p.Hide (or
// match of its last element's pattern) that exists, outside p.Show,
// resolved through symbolic links (the mount lands on the link's target,
// so that the target is hidden by whatever name a command reaches it:
// a link replaced later points at nothing new), outermost first, without
// the paths inside another one. A path that holds the workspace or the
// temp directory is left out: hiding it would take away the command's
// own files. Mode off hides nothing.
func masks(p Policy) []string {
	if p.Mode == ModeOff || len(p.Hide) == 0 {
		return nil
	}
	var keep []string
	for _, k := range []string{tempDir(os.Getenv), p.Workspace} {
		if k == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(k); err == nil {
			k = real
		}
		keep = append(keep, filepath.Clean(k))
	}
	var out []string
	for _, path := range expandHidden(p.Hide) {
		if shown(path, p.Show) {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil || shown(real, p.Show) {
			continue
		}
		if slices.ContainsFunc(keep, func(k string) bool { return within(k, real) }) {
			continue
		}
		out = append(out, real)
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := len(a) - len(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	out = slices.Compact(out)
	var outer []string
	for _, m := range out {
		if !slices.ContainsFunc(outer, func(o string) bool { return within(m, o) }) {
			outer = append(outer, m)
		}
	}
	return outer
}

// expandHidden lists the paths that exist among hide, each entry's last
// element read as a filepath.Match pattern (the folder part is taken as
// it is, so a home folder with "[" in its name still works).
func expandHidden(hide []string) []string {
	var out []string
	for _, h := range hide {
		h = filepath.Clean(h)
		dir, base := filepath.Split(h)
		if !strings.ContainsAny(base, `*?[\`) {
			if _, err := os.Lstat(h); err == nil {
				out = append(out, h)
			}
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if ok, _ := filepath.Match(base, e.Name()); ok {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

// shown reports whether path lies in one of the shown paths.
func shown(path string, show []string) bool {
	return slices.ContainsFunc(show, func(s string) bool { return within(path, filepath.Clean(s)) })
}

// Hidden reports which paths of p.Hide the launcher would hide now: those
// that exist, outside p.Show. The caller names them when namespaces are
// not available and they stay readable.
func Hidden(p Policy) []string { return masks(p) }

// needsNamespace reports whether the launcher must run the command in a
// mount namespace of its own: when p has read-only paths or paths to hide
// that exist.
func needsNamespace(p Policy) bool {
	return len(existing(p.ReadOnly)) > 0 || len(masks(p)) > 0
}

// ShownInside finds a shown path that lies strictly inside a folder of
// hide (an entry without a pattern): the launcher would cover the whole
// folder, so showing what it holds does nothing. It returns the first
// such pair.
func ShownInside(hide, show []string) (shownPath, hiddenFolder string, ok bool) {
	for _, s := range show {
		s = filepath.Clean(s)
		for _, h := range hide {
			h = filepath.Clean(h)
			if s != h && within(s, h) && !strings.ContainsAny(filepath.Base(h), `*?[\`) {
				return s, h, true
			}
		}
	}
	return "", "", false
}
