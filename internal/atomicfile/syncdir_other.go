//go:build !(unix && !aix)

package atomicfile

// syncDirUnsupported: Windows cannot fsync a folder, and grub does not
// rely on it elsewhere.
func syncDirUnsupported(error) bool { return true }
