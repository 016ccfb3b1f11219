package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// BenchmarkCompletionAudit is the completion audit of 2,000 passing
// features whose checks are `true`: init.sh, then every verify command,
// several at once. bench/all.sh sets it against a shell loop running the
// same init.sh and checks one after another (goal: at most 0.7 of the
// loop's time on 2 cores).
func BenchmarkCompletionAudit(b *testing.B) {
	const n = 2000
	store, err := harness.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	store.Private = b.TempDir()
	st := &harness.State{Goal: "make marker files", Locale: "en", Status: harness.StatusRunning,
		Phase: harness.PhaseExecution, Limits: harness.DefaultLimits(), Agent: harness.Agent{Kind: harness.AgentCommand}}
	if err := store.Create(st); err != nil {
		b.Fatal(err)
	}
	if err := store.RestoreInitScript(st.ID, []byte("#!/usr/bin/env bash\necho smoke check\n")); err != nil {
		b.Fatal(err)
	}
	l := &featurelist.List{Version: 1, Goal: st.Goal}
	for i := range n {
		ev := "ran it"
		l.Features = append(l.Features, featurelist.Feature{ID: fmt.Sprintf("feature-%d", i+1), Category: "functional",
			Description: "a check that passes", Steps: []string{"run true"}, Verify: "true", Passes: true, Evidence: &ev})
	}
	st.FeatureListBaseline = l
	c := &Controller{store: store, st: st, now: time.Now}
	b.ResetTimer()
	for b.Loop() {
		out := &outcome{}
		ok, err := c.audit(context.Background(), out)
		if err != nil || !ok {
			b.Fatalf("audit: %v, ok %v: %s", err, ok, out.verification)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "audit-ms")
}
