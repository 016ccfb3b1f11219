// Package proc runs one external command the way grub needs it everywhere:
// in its own process group, with a timeout and context cancellation that
// end the whole group (grandchildren included), and with its output
// captured within fixed bounds.
//
// It is used by the command agent backend, by the controller to run
// init.sh and a feature's verify command, and by the built-in agent's shell
// tool. Run reports a non-zero exit, a timeout or a cancellation in its
// Result; its error is kept for a command that could not start.
//
// Stopping a group sends SIGTERM to every member, waits a short grace
// period for them to leave, then sends SIGKILL (KillGroup). Run waits for
// that to finish before it returns, so that once Run has reported a timeout
// or a cancellation, nothing it started is still running. A command that
// exits normally leaves any background processes it started alone; Result
// carries the process group id so that a caller who wants them gone can call
// KillGroup.
//
// Output pipes held open by a background process do not make Run hang:
// once the command itself has exited, Run waits at most PipeGrace for the
// pipes to close and then closes them.
//
// The process group handling is Unix only (Linux is the target); on other
// systems Run kills only the command itself on a timeout or a cancellation,
// and KillGroup reports errors.ErrUnsupported.
//
// proc imports only the standard library; it must not import any other grub
// package.
package proc
