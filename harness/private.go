package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The user's private folder holds the files of a task that nothing a turn
// runs may write: they live outside every workspace, so the sandbox's
// workspace rule never reaches them and the built-in agent's tools, which
// are confined to the workspace, cannot name them. Its place is
// $XDG_STATE_HOME/grub when that is an absolute path, else
// ~/.local/state/grub (PrivateRoot); each task has a folder of its own
// there (PrivateDir), named by the task id and the workspace it lives in.

// ErrNoPrivate is returned by PrivateDir when the store has no private
// root: neither $XDG_STATE_HOME nor $HOME is an absolute path.
var ErrNoPrivate = errors.New("grub needs a private folder outside the workspace: set HOME (or XDG_STATE_HOME) to an absolute path")

// PrivateRoot returns the user's private grub folder as the environment
// read through getenv names it, or "" when it names none.
func PrivateRoot(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(filepath.Clean(d), "grub")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(filepath.Clean(h), ".local", "state", "grub")
	}
	return ""
}

// PrivateDir returns the private folder of task id, creating it (and its
// parents) with mode 0700 when missing: <Private>/tasks/<id>-<key>, where
// key is taken from the SHA-256 of the workspace's real path, so the same
// id in two workspaces (or two work trees) never shares a folder.
func (s *Store) PrivateDir(id string) (string, error) {
	dir, err := s.privatePath(id)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("grub's private folder: %w", err)
	}
	return dir, nil
}

// privatePath is PrivateDir's folder, without making it.
func (s *Store) privatePath(id string) (string, error) {
	if s.Private == "" {
		return "", ErrNoPrivate
	}
	if !ValidID(id) {
		return "", fmt.Errorf("task id %q: not 8 lowercase hex characters", id)
	}
	root := s.Root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(s.Private, "tasks", id+"-"+hex.EncodeToString(sum[:8])), nil
}
