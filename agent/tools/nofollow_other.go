//go:build !unix

package tools

// oNoFollow is zero where the system has no O_NOFOLLOW; the links are
// still checked before a file is opened.
const oNoFollow = 0

// oNonBlock is zero where opening a FIFO is not a concern.
const oNonBlock = 0
