package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrNotRepo is matched (errors.Is) by the error Open returns when the
// workspace is not inside a git work tree, is inside a bare repository, or
// is a folder the repository ignores. grub then runs without commits.
var ErrNotRepo = errors.New("not inside a git work tree")

// ErrHasCommits is returned by InitialCommit when the repository already
// has a commit.
var ErrHasCommits = errors.New("the repository already has commits")

// Repo is a workspace inside a git work tree. Its methods are safe for
// concurrent use: every call reopens the repository (so a `git gc` or a
// config change made meanwhile is seen), and commits serialize on git's own
// .git/index.lock.
type Repo struct {
	root    string        // absolute work tree root
	prefix  string        // workspace relative to root, slash-separated; "" at the root
	harness *HarnessFiles // grub's folder's commit rule; nil: none (WithHarness)
	index   *indexCache   // the last .git/index decoded, shared by WithHarness's copies
	rules   *rulesCache   // the last config and ignore rules read, shared likewise
	guard   *guardMemo    // the last guard snapshot, shared by WithHarness's copies
}

// Open finds the git work tree that contains workspace, looking in the
// workspace and its parents. The workspace may be a subfolder of the
// repository: Repo then stages, commits, compares and reports only that
// subfolder, and leaves the rest of the index as it is (like
// `git add -A . && git commit -- .` run in the workspace).
func Open(workspace string) (*Repo, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	g, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, fmt.Errorf("%s: %w", abs, ErrNotRepo)
	}
	if err != nil {
		return nil, fmt.Errorf("open the git repository of %s: %w", abs, err)
	}
	wt, err := g.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return nil, fmt.Errorf("%s is in a bare repository: %w", abs, ErrNotRepo)
	}
	if err != nil {
		return nil, fmt.Errorf("open the git work tree of %s: %w", abs, err)
	}
	root := wt.Filesystem.Root()
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("workspace %s is outside the work tree %s: %w", abs, root, ErrNotRepo)
	}
	r := &Repo{root: root, index: &indexCache{}, rules: &rulesCache{}, guard: &guardMemo{}}
	if rel != "." {
		r.prefix = filepath.ToSlash(rel)
	}
	if comps := r.prefixComps(); len(comps) > 0 {
		if comps[0] == ".git" {
			return nil, fmt.Errorf("workspace %s is inside the .git folder: %w", abs, ErrNotRepo)
		}
		var gitDir billy.Filesystem
		if st, ok := g.Storer.(*filesystem.Storage); ok {
			gitDir = st.Filesystem()
		}
		_, ign, err := loadRules(g, gitDir)
		if err != nil {
			return nil, err
		}
		if ign.pathIgnored(root, comps) {
			return nil, fmt.Errorf("workspace %s is ignored by the repository at %s (.gitignore): %w", abs, root, ErrNotRepo)
		}
	}
	return r, nil
}

// Root is the absolute path of the work tree's top folder.
func (r *Repo) Root() string { return r.root }

// Prefix is the workspace's path relative to Root, slash-separated; empty
// when the workspace is the top folder.
func (r *Repo) Prefix() string { return r.prefix }

func (r *Repo) prefixComps() []string {
	if r.prefix == "" {
		return nil
	}
	return strings.Split(r.prefix, "/")
}

// inScope reports whether the repository path name is inside the workspace.
func (r *Repo) inScope(name string) bool {
	return r.prefix == "" || strings.HasPrefix(name, r.prefix+"/")
}

// rel turns a repository path into a workspace path.
func (r *Repo) rel(name string) string {
	if r.prefix == "" {
		return name
	}
	return strings.TrimPrefix(name, r.prefix+"/")
}

// relStart is where the workspace path begins in the repository path of
// a file inside the workspace: after the prefix and its slash.
func (r *Repo) relStart() int {
	if r.prefix == "" {
		return 0
	}
	return len(r.prefix) + 1
}

// open opens the repository afresh. Its storage is always the file system
// storage PlainOpen makes.
func (r *Repo) open() (*git.Repository, *filesystem.Storage, error) {
	g, err := git.PlainOpenWithOptions(r.root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, nil, fmt.Errorf("open the git repository at %s: %w", r.root, err)
	}
	st, ok := g.Storer.(*filesystem.Storage)
	if !ok {
		return nil, nil, fmt.Errorf("open the git repository at %s: unexpected storage %T", r.root, g.Storer)
	}
	return g, st, nil
}

// workTree is the repository opened afresh for one call that stages or
// compares the workspace: its storage, its config and the ignore rules
// that apply everywhere in the work tree.
type workTree struct {
	g     *git.Repository
	st    *filesystem.Storage
	cfg   *gitConfig
	ign   *ignores
	cache *indexCache // nil: none
}

// openWorkTree opens the repository (see open) and reads its config and
// ignore rules, or takes them from r's cache when none of their files
// changed (rulesCache). The index is read separately (readIndex), so that a commit
// reads it only once it holds .git/index.lock.
func (r *Repo) openWorkTree() (*workTree, error) {
	g, st, err := r.open()
	if err != nil {
		return nil, err
	}
	cfg, ign, err := r.rules.load(g, st.Filesystem())
	if err != nil {
		return nil, err
	}
	return &workTree{g: g, st: st, cfg: cfg, ign: ign, cache: r.index}, nil
}

// loadRules reads the repository's config (with the global and system
// ones behind it), the ignore rules that apply everywhere (the excludes
// file it names and, when gitDir is not nil, .git/info/exclude) and what
// outside the work tree asks git to convert files (gitConfig.convert).
func loadRules(g *git.Repository, gitDir billy.Filesystem) (*gitConfig, *ignores, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, nil, err
	}
	ign, err := loadIgnores(cfg, gitDir)
	if err != nil {
		return nil, nil, err
	}
	if cfg.convert, err = outsideConversion(cfg, gitDir); err != nil {
		return nil, nil, err
	}
	return cfg, ign, nil
}

// HasCommits reports whether HEAD names a commit. A new repository (HEAD
// on a branch with no commit yet) has none.
func (r *Repo) HasCommits() (bool, error) {
	g, _, err := r.open()
	if err != nil {
		return false, err
	}
	h, err := headCommit(g)
	return !h.IsZero(), err
}

// headCommit is the commit HEAD resolves to, or the zero hash on an unborn
// branch.
func headCommit(g *git.Repository) (plumbing.Hash, error) {
	ref, err := g.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	return ref.Hash(), nil
}

// headTree is the tree of HEAD's commit, or the zero hash on an unborn
// branch.
func headTree(g *git.Repository) (plumbing.Hash, error) {
	h, err := headCommit(g)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return headCommitTree(g.Storer, h)
}

// headCommitTree is the tree of the HEAD commit h, or the zero hash when h
// is zero (an unborn branch).
func headCommitTree(s storer.EncodedObjectStorer, h plumbing.Hash) (plumbing.Hash, error) {
	if h.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := object.GetCommit(s, h)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read the HEAD commit %s: %w", h, err)
	}
	return c.TreeHash, nil
}

// isNotExist is os.IsNotExist that also sees through wrapping.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
