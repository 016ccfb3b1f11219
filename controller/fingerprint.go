package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/grub-dev/grub/harness"
)

// treeFingerprint detects workspace changes without git: a hash over every
// file's path, size, mode and modification time, skipping .git and the
// tasks folder (harness.GrubDirName: grub's own files are not progress).
type treeFingerprint struct{ root string }

func (t *treeFingerprint) Snapshot() (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(t.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != t.root && (d.Name() == ".git" || d.Name() == harness.GrubDirName) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.root, path)
		fmt.Fprintf(h, "%s\x00%d\x00%v\x00%d\n", rel, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
