// Package agent is the contract between grub's loop and the programs that
// do a turn's work: Turn (what the loop hands over), Result and Usage (what
// comes back), the Agent interface, and the sentinel errors a backend wraps
// (ErrTimeout, ErrUsageLimited, ErrBudgetSpent).
//
// It is a leaf: it imports only the standard library, so the controller can
// depend on it without linking any backend. The backends live in
// agent/backend; the layering test in internal/layering keeps it that way.
package agent
