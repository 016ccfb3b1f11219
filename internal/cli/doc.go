// Package cli holds grub's cobra commands, one file each, and is the only
// place where the concrete parts (the harness store, the controller, the
// agent backends and git) are wired together.
//
// A command is an Options struct, a NewCmdX(f, runF) constructor that binds
// flags to the options, and an xRun(opts) function that does the work; tests
// inject runF to check flag parsing without running anything. Commands are
// built fresh for every call of [Run], so there is no package-level state.
//
// Commands return errors instead of exiting; [ExitCode] is the one place that
// maps an error to grub's exit codes (the table in exitcode.go). Data goes to
// stdout, diagnostics to stderr, both through [IOStreams].
//
// cli may import every grub package; no grub package imports cli.
package cli
