package gitx

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// gitCommand is the git program run on the work tree at root the way
// grub runs it: never the repository's hooks (core.hooksPath is the null
// device) nor its fsmonitor (core.fsmonitor=false, a program git would
// start), in an environment without the GIT_* variables that could point
// it at another repository, index, object store, config or attribute
// source than the work tree's own (gitEnv). Without git on PATH the error
// matches ErrNoGitProgram.
func gitCommand(ctx context.Context, root string, args ...string) (*exec.Cmd, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrNoGitProgram
	}
	cmd := exec.CommandContext(ctx, git, append([]string{"-C", root, "-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Env = gitEnv(os.Environ())
	return cmd, nil
}

// HasGitProgram reports whether the git program is on PATH: grub commits
// through it where the repository asks git to convert files (Conversion).
func HasGitProgram() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// gitEnv is env without any GIT_* variable (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_CONFIG_PARAMETERS and the other
// GIT_CONFIG_* ones, GIT_ATTR_SOURCE, GIT_EXEC_PATH, …): through them
// grub's own environment could make git work on another repository,
// index or object store than the work tree grub opened, or read other
// config than go-git reads (~/.gitconfig or $XDG_CONFIG_HOME/git/config,
// /etc/gitconfig: the files Conversion and the author identity come
// from). Git LFS's GIT_LFS_* settings go with them: its clean filter then
// reads its config from the files.
func gitEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}
