//go:build !unix

package harness

// ledgerNoFollow is zero where the system has no O_NOFOLLOW; the opened
// file is still checked to be a regular file before it is written.
const ledgerNoFollow = 0
