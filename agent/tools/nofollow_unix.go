//go:build unix

package tools

import "syscall"

// oNoFollow makes an open fail on a last element that is a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes an open of a FIFO return at once instead of waiting for
// a writer; the file is refused as not regular afterwards.
const oNonBlock = syscall.O_NONBLOCK
