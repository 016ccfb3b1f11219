package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// status's turn record sums up the completion audit, which checks every
// passing feature, in one part: a 2,000-feature task's last turn is one
// line, not 2,000 "audit passed".
func TestTurnRecordLineSumsUpTheAudit(t *testing.T) {
	l := &harness.TurnRecord{Checks: []harness.LedgerCheck{{Name: "init.sh", Result: harness.CheckPassed}, {Name: "verify", Feature: "f-0", Result: harness.CheckPassed}}}
	for i := range 2000 {
		res := harness.CheckPassed
		if i == 7 {
			res = harness.CheckFailed
		}
		l.Checks = append(l.Checks, harness.LedgerCheck{Name: harness.CheckAudit, Feature: fmt.Sprintf("f-%d", i+1), Result: res})
	}
	got := turnRecordLine(l)
	if want := "0s, 0 tokens; init.sh passed; verify passed; completion audit 1999 of 2000 passed"; got != want {
		t.Errorf("turn record %q, want %q", got[:min(len(got), 200)], want)
	}
	if strings.Count(got, "audit") != 1 {
		t.Errorf("the audit is named %d times", strings.Count(got, "audit"))
	}
}
