package gitx

import (
	"os"
	"path/filepath"
	"strings"
)

// A submodule's git directory under a repository's modules/ folder has
// hooks and a config of its own, and git uses it without asking: `git
// submodule update --init` reuses modules/<name> when it is there, runs its
// post-checkout hook and, from then on, `git status` in the outer
// repository runs its fsmonitor. The guard copies the files of those that
// were there before the turn (guardRoots); one the turn creates (an agent
// with --sandbox-allow-git, which may write the git directory, running
// `git submodule add`, or writing the folder itself) is a change, like a
// nested repository it creates: Check names it and Restore removes it.

// moduleHomes are the modules/ folders of the work tree's repository and
// of each repository nested in it (absolute paths, whether or not they
// exist).
func moduleHomes(root string, nested []string) []string {
	var homes []string
	seen := map[string]bool{}
	for _, wt := range append([]string{root}, dirsOf(nested)...) {
		common, err := commonDirOf(wt)
		if err != nil {
			continue
		}
		if h := filepath.Join(common, "modules"); !seen[h] {
			seen[h] = true
			homes = append(homes, h)
		}
	}
	return homes
}

func dirsOf(dotGits []string) []string {
	out := make([]string, 0, len(dotGits))
	for _, d := range dotGits {
		out = append(out, filepath.Dir(d))
	}
	return out
}

// commonDirOf is the common git directory of the work tree at root: its
// git directory, or the folder that directory's commondir file names.
func commonDirOf(root string) (string, error) {
	gitDir, err := resolveGitDir(root)
	if err != nil {
		return "", err
	}
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		return absFrom(gitDir, strings.TrimSpace(string(data))), nil
	}
	return gitDir, nil
}

// moduleDirs lists every submodule git directory under homes, unbounded:
// a turn that makes more than maxModules of them must not keep the rest.
func moduleDirs(homes []string) []string {
	var out []string
	for _, h := range homes {
		moduleGitDirs(h, 0, -1, &out)
	}
	return out
}

// addedModules lists the submodule git directories that are under the
// copy's modules/ folders now and were not when the copy was taken. A
// copy without modules/ folders (one kept by an older grub) lists none.
func (s *GitDirSnapshot) addedModules() []string {
	var added []string
	for _, m := range moduleDirs(s.moduleHomes) {
		if !s.modules[m] {
			added = append(added, m)
		}
	}
	return added
}
