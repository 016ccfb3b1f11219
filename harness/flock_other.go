//go:build !(unix && !aix) && !windows

package harness

import (
	"fmt"
	"os"
	"runtime"
)

// errNoLocking: grub needs advisory file locks to keep two controllers off
// one task, and this platform has none that grub supports.
var errNoLocking = fmt.Errorf("advisory file locks are not supported on %s: grub runs on Linux, macOS, the BSDs and Windows", runtime.GOOS)

func tryLock(*os.File, bool) (bool, error) { return false, errNoLocking }

func lockWait(*os.File) error { return errNoLocking }

func unlock(*os.File) error { return errNoLocking }

// processGone is not known here: a recorded runner is taken as alive.
func processGone(int) bool { return false }
