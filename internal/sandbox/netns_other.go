//go:build !linux

package sandbox

import (
	"errors"
	"io"
	"os"
)

// NetNamespaces reports whether the launcher can run a command in a
// network namespace of its own: network namespaces are Linux only, so
// never.
func NetNamespaces() (ok bool, why string) {
	return false, "network namespaces are a Linux feature"
}

// NewRelay fails: there is no network namespace to relay from.
func NewRelay() (ours, theirs *os.File, err error) { return nil, nil, errors.ErrUnsupported }

// ReceiveListener fails: there is no network namespace to relay from.
func ReceiveListener(ours *os.File) (*os.File, error) { return nil, errors.ErrUnsupported }

// joinNetwork refuses a network namespace, which the launcher cannot
// make here.
func joinNetwork(p Policy, staged bool, stderr io.Writer) (ownNet bool, err error) {
	if p.NetNamespace {
		return false, errors.ErrUnsupported
	}
	return false, nil
}
