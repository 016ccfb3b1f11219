// Package atomicfile is grub's one crash-safe file writer: a temp file in
// the same folder, fsync, rename over the target, fsync of the folder. A
// reader, or a crash, sees the old content or the new, never a mix.
//
// WriteFileIn does it inside an os.Root: the temp file is created with
// O_EXCL in the target's folder, renamed over the target and the folder
// fsynced, each step through the root, so that no symbolic link on the
// way (planted before or during the write) leads the write out of it.
// WriteFile is WriteFileIn on a root opened on the target's folder: there
// is one implementation.
//
// The temp files are named ".<name>.tmp-*", so that the single rule
// TempGlob ("*.tmp-*") keeps any a crash leaves behind out of git; the
// harness writes that rule into .grub/.gitignore.
//
// It is a leaf: it imports only the standard library.
package atomicfile
