//go:build unix

package tools

import "syscall"

// oNoFollow makes an open fail on a last element that is a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW
