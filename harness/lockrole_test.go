package harness

import (
	"errors"
	"testing"
	"time"
)

// The lock record says whether its holder is a runner or a short-lived
// command; a runner is not waited for, a short-lived command is.
func TestLockRoles(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	l, err := s.Lock(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if info, held, err := s.Holder(st.ID); err != nil || !held || info.Role != RoleCommand || info.Runner() {
		t.Fatalf("short-lived holder = %+v %v %v", info, held, err)
	}
	go func() { time.Sleep(150 * time.Millisecond); l.Release() }()
	start := time.Now()
	r, err := s.LockRunner(st.ID)
	if err != nil {
		t.Fatalf("LockRunner while a short-lived command held the lock = %v; want it waited for", err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Error("LockRunner did not wait for the short-lived holder")
	}
	if info, _, _ := s.Holder(st.ID); info.Role != RoleRunner || !info.Runner() {
		t.Fatalf("runner's record = %+v", info)
	}
	start = time.Now()
	_, err = s.Lock(st.ID)
	var le *LockedError
	if !errors.As(err, &le) || !le.Info.Runner() {
		t.Fatalf("Lock while a runner holds = %v; want a *LockedError naming the runner", err)
	}
	if time.Since(start) > time.Second {
		t.Error("Lock waited for a runner")
	}
	r.Release()
	// A record from before roles is a runner's.
	if !(LockInfo{PID: 1}).Runner() {
		t.Error("a record without a role is not taken as a runner's")
	}
}
