package gitx

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// guardRoots lists the paths the guard copies for the work tree at root:
// see the list in guard.go.
func guardRoots(root string) ([]guardRoot, error) {
	dotGit := filepath.Join(root, ".git")
	gitDir, err := resolveGitDir(root)
	if err != nil {
		return nil, err
	}
	commonDir := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = absFrom(gitDir, strings.TrimSpace(string(data)))
	}
	roots := []guardRoot{
		{path: dotGit, kind: rootFile, dotGit: true},
		// A commondir file sends git to another folder for its config,
		// hooks, objects and refs: in the main repository there is none.
		{path: filepath.Join(gitDir, "commondir"), kind: rootFile, base: gitDir},
		{path: filepath.Join(gitDir, "HEAD"), kind: rootHead, base: gitDir},
	}
	if commonDir != gitDir {
		roots = append(roots, guardRoot{path: filepath.Join(gitDir, "gitdir"), kind: rootFile, base: gitDir})
	}
	roots = append(roots, gitDirRoots(commonDir, commonDir)...)
	for _, name := range []string{"objects", "refs"} {
		roots = append(roots, guardRoot{path: filepath.Join(commonDir, name), kind: rootFile, base: commonDir, mustBeDir: true})
	}
	configs := []guardRoot{
		{path: filepath.Join(commonDir, "config"), kind: rootConfig, base: commonDir},
		{path: filepath.Join(commonDir, "config.worktree"), kind: rootConfig, base: commonDir},
	}
	if gitDir != commonDir {
		configs = append(configs, guardRoot{path: filepath.Join(gitDir, "config.worktree"), kind: rootConfig, base: gitDir})
	}
	// The other linked work trees' files, and the git directories of
	// submodules (modules/), each with its own config and hooks.
	for _, wt := range subDirs(filepath.Join(commonDir, "worktrees")) {
		if wt == gitDir {
			continue
		}
		for _, name := range []string{"commondir", "gitdir"} {
			roots = append(roots, guardRoot{path: filepath.Join(wt, name), kind: rootFile, base: commonDir})
		}
		configs = append(configs, guardRoot{path: filepath.Join(wt, "config.worktree"), kind: rootConfig, base: commonDir})
	}
	var modules []string
	moduleGitDirs(filepath.Join(commonDir, "modules"), 0, maxModules, &modules)
	for _, m := range modules {
		roots = append(roots, guardRoot{path: filepath.Join(m, "commondir"), kind: rootFile, base: commonDir})
		roots = append(roots, gitDirRoots(m, commonDir)...)
		configs = append(configs, guardRoot{path: filepath.Join(m, "config"), kind: rootConfig, base: commonDir})
	}
	configs, hooksPath := withIncludes(configs)
	roots = append(roots, configs...)
	if hooksPath == "" {
		hooksPath = globalHooksPath()
	}
	if hooksPath != "" {
		p := absFrom(root, expandHome(hooksPath))
		if !containsRoot(roots, p) {
			roots = append(roots, guardRoot{path: p, kind: rootTree})
		}
	}
	return roots, nil
}

// gitDirRoots are the folders and files of the git directory dir that can
// make git run a program or read another repository's objects, besides
// its config: hooks/, info/ (attributes, exclude, sparse-checkout…) and
// objects/info/alternates. base is the folder every component between
// must be a real folder of.
func gitDirRoots(dir, base string) []guardRoot {
	return []guardRoot{
		{path: filepath.Join(dir, "hooks"), kind: rootTree, base: base},
		{path: filepath.Join(dir, "info"), kind: rootTree, base: base},
		{path: filepath.Join(dir, "objects", "info", "alternates"), kind: rootFile, base: base},
	}
}

// subDirs lists the real folders in dir (none when it is missing).
func subDirs(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range des {
		if d.Type().IsDir() {
			out = append(out, filepath.Join(dir, d.Name()))
		}
	}
	return out
}

// maxModules bounds the submodule git directories guarded.
const maxModules = 100

// moduleGitDirs adds to out the git directories under dir, a modules/
// folder: a submodule's name may hold slashes, so any folder holding a
// HEAD file is one, and its own modules/ folder is searched in turn.
// At most limit are listed (limit < 0: no bound).
func moduleGitDirs(dir string, depth, limit int, out *[]string) {
	if depth > maxIncludeDepth {
		return
	}
	for _, sub := range subDirs(dir) {
		if limit >= 0 && len(*out) >= limit {
			return
		}
		if fi, err := os.Lstat(filepath.Join(sub, "HEAD")); err == nil && fi.Mode().IsRegular() {
			*out = append(*out, sub)
			moduleGitDirs(filepath.Join(sub, "modules"), depth+1, limit, out)
			continue
		}
		moduleGitDirs(sub, depth+1, limit, out)
	}
}

// resolveGitDir is the work tree's git directory: .git itself, or the
// folder a .git file names (a linked work tree, a submodule).
func resolveGitDir(root string) (string, error) {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotGit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("guard the git directory: %w", &GitDirGoneError{Path: ".git"})
	}
	if err != nil {
		return "", fmt.Errorf("guard the git directory: %w", err)
	}
	if fi.Mode().IsRegular() {
		data, err := os.ReadFile(dotGit)
		if err != nil {
			return "", fmt.Errorf("guard the git directory: %w", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return "", fmt.Errorf("guard the git directory: %s is a file that does not name a git directory (gitdir: …)", dotGit)
		}
		return absFrom(root, strings.TrimSpace(dir)), nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return filepath.EvalSymlinks(dotGit)
	}
	return dotGit, nil
}

// withIncludes adds to configs the files they include, recursively, and
// returns the last core.hooksPath they set. Conditions of includeIf are
// not evaluated: every file that may be read is guarded.
func withIncludes(configs []guardRoot) ([]guardRoot, string) {
	var hooksPath string
	seen := map[string]bool{}
	var out []guardRoot
	var visit func(r guardRoot, depth int)
	visit = func(r guardRoot, depth int) {
		if seen[r.path] || len(out) >= 100 {
			return
		}
		seen[r.path] = true
		out = append(out, r)
		cfg, err := parseConfigFile(r.path)
		if err != nil || cfg == nil {
			return
		}
		if v := lastValue(cfg, "core", "", "hookspath"); v != "" {
			hooksPath = v
		}
		if depth >= maxIncludeDepth {
			return
		}
		for _, inc := range includePaths(cfg) {
			p := absFrom(filepath.Dir(r.path), expandHome(inc))
			visit(guardRoot{path: p, kind: rootConfig}, depth+1)
		}
	}
	for _, c := range configs {
		visit(c, 0)
	}
	return out, hooksPath
}

// parseConfigFile parses a git config file; nil without error when it
// does not exist.
func parseConfigFile(p string) (*format.Config, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseConfig(data)
}

func parseConfig(data []byte) (*format.Config, error) {
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// includePaths lists include.path and includeIf.<cond>.path values.
func includePaths(cfg *format.Config) []string {
	var paths []string
	for _, s := range cfg.Sections {
		switch {
		case s.IsName("include"):
			paths = append(paths, s.Options.GetAll("path")...)
		case s.IsName("includeIf"):
			for _, sub := range s.Subsections {
				paths = append(paths, sub.Options.GetAll("path")...)
			}
		}
	}
	return paths
}

// lastValue is the last value of section[.sub].key in cfg, or "".
func lastValue(cfg *format.Config, section, sub, key string) string {
	for _, s := range cfg.Sections {
		if !s.IsName(section) {
			continue
		}
		opts := s.Options
		if sub != "" {
			if !s.HasSubsection(sub) {
				continue
			}
			opts = s.Subsection(sub).Options
		}
		if vs := opts.GetAll(key); len(vs) > 0 {
			return vs[len(vs)-1]
		}
	}
	return ""
}

// globalHooksPath is core.hooksPath from the user's global config, which
// git applies when the repository does not set it.
func globalHooksPath() string {
	var files []string
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		files = []string{p}
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	var v string
	for _, f := range files {
		cfg, err := parseConfigFile(f)
		if err != nil || cfg == nil {
			continue
		}
		if hp := lastValue(cfg, "core", "", "hookspath"); hp != "" {
			v = hp
		}
	}
	return v
}

// expandHome expands a leading ~/ as git does in paths.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// absFrom resolves p relative to dir unless it is absolute.
func absFrom(dir, p string) string {
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

func containsRoot(roots []guardRoot, p string) bool {
	for _, r := range roots {
		if r.path == p {
			return true
		}
	}
	return false
}
