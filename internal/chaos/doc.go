// Package chaos holds no code: its tests kill grub (the real program,
// built from this test binary) at every failpoint of a turn
// (internal/failpoint) and with kill -9 at random moments, resume it to
// the end each time, and check that nothing was lost or doubled: exactly
// one progress-log entry and one commit per turn, and a settled state.
// They also start concurrent resumes of one task and check that exactly
// one runs while the others exit 75.
//
// `make test` runs a short version; `make chaos` the full one
// (CHAOS_N random trials, 20 concurrent resumes) and prints the counts.
package chaos
