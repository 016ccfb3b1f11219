//go:build !linux

package sandbox

import "errors"

func makeWritable(path string) error { return errors.ErrUnsupported }
