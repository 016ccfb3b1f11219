// Package proctest holds helpers for tests of code that starts processes:
// wait for a file or a pid file a test program writes, and check that a
// process has ended. Its helpers are Unix only. It imports only the
// standard library.
package proctest
