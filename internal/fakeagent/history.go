package fakeagent

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The behaviours that rewrite git's history, with the git program in the
// workspace (grub's referee puts it back):
//
//	reset-hard      git reset --hard to the repository's first commit, and report continue
//	amend           honest work, then git commit --amend of grub's last turn commit
//	checkout-branch git checkout -b other, then honest work
//	delete-branch   git update-ref -d of the branch HEAD is on, then honest work
//	detach          git checkout --detach HEAD~1 (the turn commit before the last), and report continue
//	forge-commit    honest work, then a commit of it with grub's subject and trailers for this turn
//	replace-commit  honest work, then git replace of grub's last turn commit by a forged root commit (packed)
//	plant-shallow   honest work, then grub's last turn commit written into .git/shallow
//	reset-prune     honest work, then git reset --hard to the first commit, reflog expire and gc --prune=now

// git runs the git program in the workspace.
func (a *fake) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = a.workspace
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com",
		"GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// rewriteBefore plays the history cheats that come before the work (done:
// the turn ends there, with code).
func (a *fake) rewriteBefore(behaviour string) (code int, done bool) {
	var err error
	switch behaviour {
	case "reset-hard":
		var first string
		if first, err = a.git("rev-list", "--max-parents=0", "HEAD"); err == nil {
			_, err = a.git("reset", "-q", "--hard", strings.Fields(first)[0])
		}
		if err == nil {
			a.say("continue", "started over from the first commit", "start again", "")
			return 0, true
		}
	case "detach":
		if _, err = a.git("checkout", "-q", "-f", "--detach", "HEAD~1"); err == nil {
			a.say("continue", "looked at an older commit", "carry on", "")
			return 0, true
		}
	case "checkout-branch":
		_, err = a.git("checkout", "-q", "-b", "other")
	case "delete-branch":
		var branch string
		if branch, err = a.git("symbolic-ref", "HEAD"); err == nil {
			_, err = a.git("update-ref", "-d", branch)
		}
	}
	if err != nil {
		return a.fail(err), true
	}
	return 0, false
}

// rewriteAfter plays the history cheats that come after the work.
func (a *fake) rewriteAfter(behaviour, feature string) error {
	switch behaviour {
	case "amend":
		if _, err := a.git("add", "-A", "."); err != nil {
			return err
		}
		_, err := a.git("commit", "-q", "--amend", "-m", "squashed into grub's commit")
		return err
	case "forge-commit":
		if _, err := a.git("add", "-A", "."); err != nil {
			return err
		}
		id := os.Getenv("GRUB_TASK_ID")
		if id == "" {
			id = taskFromHarness(a.harness)
		}
		msg := fmt.Sprintf("grub(%s) #%d %s: implemented %s\n\nGrub-Task: %s\nGrub-Iteration: %d\nGrub-Feature: %s\nGrub-Status: running\n",
			id, a.iteration, feature, feature, id, a.iteration, feature)
		_, err := a.git("commit", "-q", "-m", msg)
		return err
	}
	return a.hideHistory(behaviour)
}

// taskFromHarness is the task id: the harness folder's name.
func taskFromHarness(dir string) string {
	dir = strings.TrimRight(dir, string(os.PathSeparator))
	if i := strings.LastIndexByte(dir, os.PathSeparator); i >= 0 {
		return dir[i+1:]
	}
	return dir
}
