//go:build linux

package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent/backend"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/loopstate"
)

// A command agent that prints 50 MB and then its decision has the
// decision accepted: the command backend keeps the start and the end of
// the output, and the decision is read from the end.
func TestDecisionAfterFiftyMegabytesIsAccepted(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	cmd := `head -c 52428800 /dev/zero | tr '\0' x; printf '\n<loop-state>{"status":"continue","summary":"printed 50 MB","nextStep":"go on"}</loop-state>\n'`
	more := 2
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: backend.NewCommand(cmd),
		Progress: &r.stderr, Limits: harness.LimitChanges{MaxIterations: &more}, Heartbeat: time.Hour, Committer: &r.commits})
	if err != nil {
		t.Fatal(err)
	}
	if st.ConsecutiveFailures != 0 || st.LastDecision.Status != loopstate.Continue || st.LastDecision.Summary != "printed 50 MB" {
		t.Fatalf("failures %d (%q), decision %+v; want the decision after the output accepted", st.ConsecutiveFailures, st.LastError, st.LastDecision)
	}
	if strings.Contains(r.log(), "no <loop-state>") {
		t.Errorf("the log blames a missing decision:\n%s", r.log())
	}
}
