//go:build !unix

package harness

import "os"

// oNoFollow is 0 where the platform has no O_NOFOLLOW: the Lstat checks
// and the handle's Stat stand in for it.
const oNoFollow = 0

// linkCount is not known here.
func linkCount(fi os.FileInfo) (uint64, bool) { return 0, false }
