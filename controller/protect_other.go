//go:build !unix

package controller

import "io/fs"

// fileID is a file's device, inode and number of names; without them,
// one name and no inode.
func fileID(fs.FileInfo) (dev, ino, links uint64) { return 0, 0, 1 }

// links is a file's number of names.
func links(fi fs.FileInfo) uint64 { _, _, n := fileID(fi); return n }
