package sandbox

import (
	"syscall"
	"unsafe"
)

// makeWritable asks mount_setattr(2) to clear the read-only flag of the
// mount at path: Landlock does not see this call, so only the missing
// CAP_SYS_ADMIN stops it.
func makeWritable(path string) error {
	const (
		sysMountSetattr = 442 // the same number on every architecture
		mountAttrRdonly = 0x1
	)
	attr := struct{ set, clr, propagation, userns uint64 }{clr: mountAttrRdonly}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	const atFDCWD = -100
	fd := atFDCWD
	_, _, errno := syscall.Syscall6(sysMountSetattr, uintptr(fd), uintptr(unsafe.Pointer(p)), 0, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
