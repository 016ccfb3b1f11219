//go:build !linux

package proc

import "errors"

// Descendants reports errors.ErrUnsupported outside Linux.
func Descendants() (map[int]uint64, error) { return nil, errors.ErrUnsupported }
