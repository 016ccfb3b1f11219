//go:build !linux && !darwin

package gitx

// serialised runs fn: this platform has no folder lock grub uses, so two
// grub processes removing one stale index lock may race (see removeStale).
func serialised(_ string, fn func()) { fn() }
