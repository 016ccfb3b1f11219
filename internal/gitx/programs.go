package gitx

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ProgramsInRepo lists what in the work tree root's repository makes git
// run a program: the repositories nested in the work tree, then hooks (executable files in hooks/ or the core.hooksPath
// folder, git's *.sample files left out) and the config keys, in the
// config files git reads for the repository and the files they include,
// that name a program or a command (core.fsmonitor, alias.*, filter.*,
// …), for the repository and each nested one. Each is one line, for a person ("hook .git/hooks/pre-commit",
// ".git/config: core.fsmonitor = \"…\""), paths relative to root where
// they lie inside it. Outside a repository it returns nil. grub itself
// never runs any of them; grub doctor shows them so that the user knows
// what their own git will run.
func ProgramsInRepo(root string) ([]string, error) {
	roots, err := guardRoots(root)
	if err != nil {
		return nil, nil // not a repository
	}
	var out []string
	nested, err := nestedRepos(root)
	if err != nil {
		return nil, err
	}
	for _, n := range nested {
		out = append(out, "nested repository "+relTo(root, n)+" (git runs its hooks and config there, and from the outer repository for a submodule)")
	}
	roots = withNested(roots, nested)
	for _, r := range roots {
		switch r.kind {
		case rootTree:
			if r.base != "" && filepath.Base(r.path) != "hooks" {
				continue // info/: no programs of its own
			}
			out = append(out, hooksIn(root, r.path)...)
		case rootConfig:
			lines, err := programKeysIn(root, r.path)
			if err != nil {
				return out, err
			}
			out = append(out, lines...)
		}
	}
	return out, nil
}

// hooksIn lists the executable regular files of a hooks folder, by path
// relative to root.
func hooksIn(root, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || info.Mode()&fs.ModeType != 0 || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		out = append(out, "hook "+relTo(root, filepath.Join(dir, e.Name())))
	}
	return out
}

// programKeysIn lists a config file's keys that name a program, with
// their values; a missing file has none.
func programKeysIn(root, path string) ([]string, error) {
	cfg, err := parseConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", relTo(root, path), err)
	}
	if cfg == nil {
		return nil, nil
	}
	flat := flattenConfig(cfg)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		if namesProgram(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s = %s", relTo(root, path), k, quoteAll(flat[k])))
	}
	return out, nil
}

// relTo is p relative to root when it lies inside it, else p.
func relTo(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}
