package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// ProtectedPaths is the Policy.ReadOnly list for a task: the files and
// folders of the repository's git directory that can make git run a
// program (gitGuarded: what the referee's guard copies, from
// gitx.GuardedPaths) and grub's own files the agent must not write
// (harnessFiles: the task's state.json, accepted-list.json and lock, and
// grub's private folder, which holds the control queues), as
// absolute paths, cleaned, without duplicates. A relative path is taken
// from the workspace.
//
// Left out, because a command must be able to write them: the workspace
// and its ancestors, and the work tree's .git when it is a folder (git
// writes the index, objects and refs there; only the parts listed are
// read-only). Paths that do not exist yet stay in the list: the launcher
// skips them at each run, so one created later is protected from then on.
func ProtectedPaths(workspace string, gitGuarded, harnessFiles []string) []string {
	ws := filepath.Clean(workspace)
	dotGit := filepath.Join(ws, ".git")
	seen := map[string]bool{}
	var out []string
	for _, p := range append(append([]string(nil), gitGuarded...), harnessFiles...) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		p = filepath.Clean(p)
		if seen[p] || within(ws, p) {
			continue
		}
		if p == dotGit {
			if fi, err := os.Lstat(p); err != nil || fi.IsDir() {
				continue
			}
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// within reports whether path lies in dir or is dir itself: whether
// making dir read-only would make path read-only.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// WholeGitDirs is the part of Policy.ReadOnly that makes a repository's
// git directories read-only as a whole (gitDirs, from gitx.GitDirs: the
// work tree's git directory, and a linked work tree's common directory),
// so that no command commits, moves HEAD or writes anything git reads:
// the default, as Codex's workspace-write mode does. A task that lets the
// agent commit (--sandbox-allow-git) leaves them out, and only the
// guarded files in them (ProtectedPaths) stay read-only. Paths are made
// absolute from the workspace and cleaned; one that holds the workspace
// is left out.
func WholeGitDirs(workspace string, gitDirs []string) []string {
	ws := filepath.Clean(workspace)
	var out []string
	for _, p := range gitDirs {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		p = filepath.Clean(p)
		if within(ws, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}
