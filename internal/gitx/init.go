package gitx

import (
	"errors"
	"fmt"

	git "github.com/go-git/go-git/v5"
)

// Init makes dir a git repository of its own (`git init`), unless it is
// one already, and opens it. `grub demo` runs in one, so that `history`
// has commits to show.
func Init(dir string) (*Repo, error) {
	if _, err := git.PlainInit(dir, false); err != nil && !errors.Is(err, git.ErrRepositoryAlreadyExists) {
		return nil, fmt.Errorf("git init %s: %w", dir, err)
	}
	return Open(dir)
}
