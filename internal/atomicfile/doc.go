// Package atomicfile is grub's one crash-safe file writer: a temp file in
// the same folder, fsync, rename over the target, fsync of the folder. A
// reader, or a crash, sees the old content or the new, never a mix.
//
// The temp files are named ".<name>.tmp-*", so that the single rule
// TempGlob ("*.tmp-*") keeps any a crash leaves behind out of git; the
// harness writes that rule into .grub/.gitignore.
//
// It is a leaf: it imports only the standard library.
package atomicfile
