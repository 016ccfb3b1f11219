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

// StartTime reports false outside Linux.
func StartTime(pid int) (start uint64, ok bool) { return 0, false }

// Children reports errors.ErrUnsupported outside Linux.
func Children() (map[int]uint64, error) { return nil, errors.ErrUnsupported }

// KillIfSame does nothing outside Linux.
func KillIfSame(pid int, start uint64) bool { return false }
