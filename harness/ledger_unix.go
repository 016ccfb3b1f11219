//go:build unix

package harness

import "syscall"

// ledgerNoFollow makes the ledger's open fail on a symbolic link.
const ledgerNoFollow = syscall.O_NOFOLLOW
