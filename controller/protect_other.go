//go:build !unix

package controller

import "io/fs"

// links is a file's number of names; without link counts, one.
func links(fs.FileInfo) uint64 { return 1 }
