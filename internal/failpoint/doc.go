// Package failpoint kills grub at a named step, for crash tests: with
// GRUB_FAILPOINT=record.after-log the process exits with ExitCode the
// first time it reaches Hit("record.after-log"), as a kill -9 there would
// leave things (no deferred function runs, nothing is flushed or
// released). GRUB_FAILPOINT=record.after-log@2 exits at the second hit.
//
// The variable is read once, when the package is initialised; unset, Hit
// is a comparison with an empty string. The names of the steps are the
// constants below, listed in Names; docs/ARCHITECTURE.md's crash table
// says what resume does after each.
//
// It is a leaf: it imports only the standard library.
package failpoint
