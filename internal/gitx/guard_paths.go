package gitx

// GuardedPaths lists, as absolute paths, what GuardGitDir copies for the
// work tree at root (see the list in guard.go): the .git entry, a linked
// work tree's commondir file, hooks/ and the folder core.hooksPath names,
// the config files and those they include, info/attributes and
// info/exclude. Paths that do not exist are listed too. The sandbox makes
// them read-only for commands (sandbox.ProtectedPaths), except the .git
// folder itself.
func GuardedPaths(root string) ([]string, error) {
	roots, err := guardRoots(root)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(roots))
	for i, r := range roots {
		paths[i] = r.path
	}
	return paths, nil
}
