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
	root   string // absolute work tree root
	prefix string // workspace relative to root, slash-separated; "" at the root
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
	r := &Repo{root: root}
	if rel != "." {
		r.prefix = filepath.ToSlash(rel)
	}
	if comps := r.prefixComps(); len(comps) > 0 {
		if comps[0] == ".git" {
			return nil, fmt.Errorf("workspace %s is inside the .git folder: %w", abs, ErrNotRepo)
		}
		cfg, err := loadConfig(g)
		if err != nil {
			return nil, err
		}
		var gitDir billy.Filesystem
		if st, ok := g.Storer.(*filesystem.Storage); ok {
			gitDir = st.Filesystem()
		}
		ign, err := loadIgnores(cfg, gitDir)
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
func headTree(g *git.Repository) (plumbing.Hash, plumbing.Hash, error) {
	h, err := headCommit(g)
	if err != nil || h.IsZero() {
		return h, plumbing.ZeroHash, err
	}
	c, err := object.GetCommit(g.Storer, h)
	if err != nil {
		return h, plumbing.ZeroHash, fmt.Errorf("read the HEAD commit %s: %w", h, err)
	}
	return h, c.TreeHash, nil
}

// isNotExist is os.IsNotExist that also sees through wrapping.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
