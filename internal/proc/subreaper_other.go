//go:build !linux

package proc

import "errors"

// BecomeSubreaper reports errors.ErrUnsupported: child subreapers are a
// Linux feature.
func BecomeSubreaper() error { return errors.ErrUnsupported }

// Orphans reports errors.ErrUnsupported outside Linux.
func Orphans(except map[int]bool) ([]int, error) { return nil, errors.ErrUnsupported }

// KillOrphans reports errors.ErrUnsupported outside Linux.
func KillOrphans(except map[int]bool) ([]int, error) { return nil, errors.ErrUnsupported }
