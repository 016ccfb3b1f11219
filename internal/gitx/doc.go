// Package gitx is grub's git layer (see docs/ARCHITECTURE.md, "Git") and
// the only package that imports go-git. It opens the work tree that holds a
// workspace (Open, ErrNotRepo), tells whether the workspace has
// uncommitted changes (Dirty) or any commit at all (HasCommits, and
// InitialCommit for a new repository), commits every turn with the message
// `grub(<id>) #<n> <feature>: <summary>` and the Grub-Task, Grub-Iteration,
// Grub-Feature and Grub-Status trailers (CommitTurn), gives a content token
// for the controller's "did the turn change the workspace" check
// (TreeHash), reads a task's turns back from the log (History), and copies
// what in the git directory can make git run a program so that a turn that
// plants one is caught and undone (GuardGitDir, guard.go), without the git
// binary. It lists the repository's work trees (Worktrees) and creates a
// linked one for grub start --worktree (AddWorktree, worktree.go). The git
// program runs for that, and to hash the files a scan reads in a
// repository that asks git to convert them on commit (Conversion,
// convert.go); always through gitCommand (gitprog.go): no hooks, no
// fsmonitor, no GIT_* variables.
//
// Staging follows `git add -A .` run in the workspace: .gitignore files at
// every level, .git/info/exclude and the global excludes file are honoured
// (except in grub's own folder, where the HarnessFiles rule given to
// WithHarness decides alone, harness.go),
// deleted files leave the index, and a workspace that is a subfolder of the
// repository commits only that subfolder. It does not use go-git's
// Worktree.Status or AddWithOptions, which hash every file and walk ignored
// folders: its own walk skips ignored folders as it reaches them and
// trusts the index's stat data for unchanged files, so a turn commit in a
// 10,000-file repository costs close to what `git add -A && git commit`
// does, and several times less than go-git's own path (see the benchmarks
// in bench_test.go and bench/git-commit.sh). It writes .git/index the way git does,
// under .git/index.lock, with the stat data git checks, so git itself sees
// a clean tree after a grub commit.
//
// Clean filters (Git LFS), end-of-line conversion (text, eol, core.autocrlf),
// working-tree-encoding and ident are git's: where the attributes or the
// config ask for any, the files a commit reads are hashed by `git
// hash-object --stdin-paths`, which applies them as `git add` would
// (convert.go); grub's own files under the harness folder never are.
// Not supported: submodule updates (a submodule's recorded commit is
// kept), and nested repositories that are not submodules (skipped, as git
// does; a gitlink in the index is kept only for a submodule .gitmodules
// declared when the guard's copy was taken).
//
// gitx never pushes, resets, rebases, amends or moves any reference other
// than the current branch (or a detached HEAD). It may import the standard
// library, go-git (with its go-billy file system), internal/termsafe (to
// escape the agent's text in commit messages) and internal/atomicfile (the
// guard's restores go through grub's one atomic writer); nothing else of
// grub. grub's own names (the tasks folder, its tracked files) come in
// through HarnessFiles: gitx never imports harness.
package gitx
