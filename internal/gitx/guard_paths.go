package gitx

import (
	"os"
	"path/filepath"
	"strings"
)

// GuardedPaths lists, as absolute paths, what GuardGitDir copies for the
// work tree at root (see the list in guard.go): the .git entry, a linked
// work tree's commondir and gitdir files, hooks/ and the folder
// core.hooksPath names, the config files and those they include, info/,
// objects/info/alternates, and the same of linked work trees and
// submodules (HEAD, which git checkout writes, is checked but not
// listed; nested repositories in the work tree are not walked for here). Paths that do not exist are listed too. The sandbox makes
// them read-only for commands (sandbox.ProtectedPaths), except the .git
// folder itself.
func GuardedPaths(root string) ([]string, error) {
	roots, err := guardRoots(root)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(roots))
	for _, r := range roots {
		if r.kind != rootHead && !r.mustBeDir { // git writes them: checked, not mounted
			paths = append(paths, r.path)
		}
	}
	return paths, nil
}

// GitDirs lists, as absolute paths with links resolved, the git
// directory of the work tree at root and, for a linked work tree, the
// common directory it shares with the main one: the folders the sandbox
// makes read-only as a whole unless the task lets the agent commit
// (--sandbox-allow-git).
func GitDirs(root string) ([]string, error) {
	gitDir, err := resolveGitDir(root)
	if err != nil {
		return nil, err
	}
	dirs := []string{gitDir}
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		if common := absFrom(gitDir, strings.TrimSpace(string(data))); common != gitDir {
			dirs = append(dirs, common)
		}
	}
	for i, d := range dirs {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			dirs[i] = real
		}
	}
	return dirs, nil
}
