package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grub-dev/grub/schemas"
)

func TestControlAppendPeekTake(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	if reqs, err := s.TakeControl(st.ID); err != nil || len(reqs) != 0 {
		t.Fatalf("TakeControl with no file = %v, %v", reqs, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	iters := 50
	sent := []ControlRequest{
		{Kind: ControlPause, At: at},
		{Kind: ControlEdit, At: at, Goal: "new goal"},
		{Kind: ControlLimits, At: at, Limits: &LimitChanges{MaxIterations: &iters}},
		{Kind: ControlSteer, Message: "use sqlite"}, // At filled in
	}
	for _, r := range sent {
		if err := s.AppendControl(st.ID, r); err != nil {
			t.Fatalf("AppendControl(%+v): %v", r, err)
		}
	}
	peek, err := s.PeekControl(st.ID)
	if err != nil || len(peek) != len(sent) {
		t.Fatalf("PeekControl = %v, %v", peek, err)
	}
	took, err := s.TakeControl(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(took) != len(sent) || took[1].Goal != "new goal" || *took[2].Limits.MaxIterations != 50 || took[3].At.IsZero() || took[0].Kind != ControlPause {
		t.Fatalf("TakeControl = %+v", took)
	}
	path, _ := s.ControlPath(st.ID)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("control.json still there after TakeControl (%v)", err)
	}
	if again, err := s.TakeControl(st.ID); err != nil || len(again) != 0 {
		t.Fatalf("second TakeControl = %v, %v; want nothing", again, err)
	}
}

func TestControlRejectsIncompleteRequests(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	cases := []ControlRequest{
		{Kind: "reboot"},
		{Kind: ControlEdit, Goal: "  "},
		{Kind: ControlSteer},
		{Kind: ControlSteer, Message: "\n"},
		{Kind: ControlLimits},
		{Kind: ControlLimits, Limits: &LimitChanges{}},
	}
	for _, r := range cases {
		if err := s.AppendControl(st.ID, r); err == nil {
			t.Errorf("AppendControl(%+v) succeeded", r)
		}
	}
	zero := 0
	var se *schemas.Error
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlLimits, Limits: &LimitChanges{MaxIterations: &zero}}); !errors.As(err, &se) || !strings.Contains(err.Error(), "control.json at /requests/0/limits/maxIterations") {
		t.Errorf("AppendControl of maxIterations 0 = %v, want a *schemas.Error at the field", err)
	}
	if _, err := os.Stat(s.Path(st.ID, FileControl)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected request created control.json (%v)", err)
	}
	var nf *NotFoundError
	if err := s.AppendControl("ffffffff", ControlRequest{Kind: ControlStop}); !errors.As(err, &nf) {
		t.Errorf("AppendControl to a missing task = %v, want *NotFoundError", err)
	}
}

func TestControlCorruptFileIsReportedAndKept(t *testing.T) {
	cases := map[string]string{
		"not json":     `{"version":1,"requests":[`,
		"unknown kind": `{"version":1,"requests":[{"kind":"reboot","at":"2026-01-02T03:04:05Z"}]}`,
		"bad time":     `{"version":1,"requests":[{"kind":"stop","at":"yesterday"}]}`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			st := mustCreate(t, s, newState("g"))
			path, err := s.ControlPath(st.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			ops := map[string]func() error{
				"take":   func() error { _, err := s.TakeControl(st.ID); return err },
				"peek":   func() error { _, err := s.PeekControl(st.ID); return err },
				"append": func() error { return s.AppendControl(st.ID, ControlRequest{Kind: ControlStop}) },
			}
			for op, f := range ops {
				err := f()
				var se *schemas.Error
				if !errors.As(err, &se) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s = %v, want a *schemas.Error naming control.json", op, err)
				}
				if data, _ := os.ReadFile(path); !bytes.Equal(data, []byte(doc)) {
					t.Errorf("%s changed the corrupt file", op)
				}
			}
		})
	}
}

func TestControlConcurrentAppendersLoseNothing(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	const writers, each = 8, 10
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken []string
		done  = make(chan struct{})
	)
	// A taker drains the queue while the writers append, as a running
	// controller would.
	takerDone := make(chan error, 1)
	go func() {
		for {
			reqs, err := s.TakeControl(st.ID)
			if err != nil {
				takerDone <- err
				return
			}
			mu.Lock()
			for _, r := range reqs {
				taken = append(taken, r.Message)
			}
			mu.Unlock()
			select {
			case <-done:
				takerDone <- nil
				return
			default:
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlSteer, Message: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	if err := <-takerDone; err != nil {
		t.Fatal(err)
	}
	rest, err := s.TakeControl(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rest {
		taken = append(taken, r.Message)
	}
	sort.Strings(taken)
	var want []string
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			want = append(want, fmt.Sprintf("w%d-%d", w, i))
		}
	}
	sort.Strings(want)
	if strings.Join(taken, ",") != strings.Join(want, ",") {
		t.Fatalf("taken %d requests, want each of %d exactly once:\n%v", len(taken), len(want), taken)
	}
}

// TestReadControlReadsKeysExactly: a control request with a key in
// another case ("Kind") is refused, not taken for "kind".
func TestReadControlReadsKeysExactly(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("goal"))
	if err := s.AppendControl(st.ID, ControlRequest{Kind: ControlPause}); err != nil {
		t.Fatal(err)
	}
	path, err := s.ControlPath(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), `"kind": "pause"`, `"kind": "pause", "Message": "x"`, 1)
	if forged == string(data) {
		t.Fatalf("control.json has no pause request:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	var se *schemas.Error
	if _, err := s.PeekControl(st.ID); !errors.As(err, &se) {
		t.Fatalf("PeekControl of a case-variant key = %v, want a *schemas.Error", err)
	}
}
