package gitx

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
		if r.kind != rootHead { // git checkout writes it: checked, not mounted
			paths = append(paths, r.path)
		}
	}
	return paths, nil
}
