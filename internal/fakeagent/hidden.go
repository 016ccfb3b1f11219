package fakeagent

import (
	"os"
	"path/filepath"
)

// hideHistory plays the cheats that leave every ref in place but make
// the user's git show another history (see history.go's list).
func (a *fake) hideHistory(behaviour string) error {
	switch behaviour {
	case "replace-commit":
		head, err := a.git("rev-parse", "HEAD")
		if err != nil {
			return err
		}
		forged, err := a.git("commit-tree", "-m", "the whole project, written in one go", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
		if err != nil {
			return err
		}
		if _, err := a.git("replace", head, forged); err != nil {
			return err
		}
		_, err = a.git("pack-refs", "--all")
		return err
	case "reset-prune":
		first, err := a.git("rev-list", "--max-parents=0", "HEAD")
		if err != nil {
			return err
		}
		for _, args := range [][]string{{"reset", "-q", "--hard", first}, {"reflog", "expire", "--expire=now", "--all"},
			{"gc", "-q", "--prune=now"}} {
			if _, err := a.git(args...); err != nil {
				return err
			}
		}
		return nil
	case "plant-shallow":
		head, err := a.git("rev-parse", "HEAD")
		if err != nil {
			return err
		}
		gitDir, err := a.git("rev-parse", "--absolute-git-dir")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(gitDir, "shallow"), []byte(head+"\n"), 0o644)
	}
	return nil
}
