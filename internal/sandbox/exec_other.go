//go:build !unix

package sandbox

import "errors"

// execve reports errors.ErrUnsupported: the launcher replaces itself with
// the command, which only Unix can do. Wrap never routes an unconfined
// policy through the launcher, and confining policies need Linux.
func execve(path string, argv, env []string) error { return errors.ErrUnsupported }
