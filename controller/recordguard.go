package controller

import (
	"errors"
	"strings"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/harness"
)

// The record is grub's: the progress log's entries, turns.jsonl, the
// checklist, and after the initializer init.sh. keepRecord notes them at
// the start of a turn; checkRecord, after the agent and again after the
// verification (init.sh and verify commands are the agent's too), puts
// back what the turn changed and fails it naming each file.

// keepRecord keeps the record as the turn starts (harness.KeepRecord, in
// the private folder), so that any difference after the turn is the
// turn's.
func (c *Controller) keepRecord() error { return c.store.KeepRecord(c.st.ID) }

// checkRecord puts back the record the turn changed and fails the turn,
// naming each file (harness.CheckRecord: the log's entries, the ledger,
// the checklist). who says what changed it. base is the accepted list the
// turn started from: once there is one, init.sh is part of the record
// too, and one deleted or emptied gets initScript, its content at the
// turn's start, back (nil: not known, after a crash).
func (c *Controller) checkRecord(out *outcome, who string, base *featurelist.List, initScript []byte) ([]string, error) {
	changes, err := c.store.CheckRecord(c.st)
	if err != nil {
		return nil, err
	}
	var what []string
	for _, ch := range changes {
		what = append(what, ch.String())
	}
	if base != nil {
		if lost, err := c.initScriptLost(initScript); err != nil {
			return nil, err
		} else if lost != "" {
			what = append(what, lost)
		}
	}
	for _, w := range what {
		out.failAs(harness.FindingTampering, "illegal edit: %s %s; the record is grub's, so grub put its version back (append notes to the end of the progress log, never rewrite it)", w, who)
	}
	return what, nil
}

// initScriptLost puts back an init.sh the execution phase deleted or
// emptied (once the initializer's is accepted, features' checks start with
// it) and says what happened; "" when nothing did. A link or folder in its
// place is checkRegularFiles's.
func (c *Controller) initScriptLost(before []byte) (string, error) {
	if len(strings.TrimSpace(string(before))) == 0 {
		return "", nil
	}
	rel := c.store.Rel(c.store.Path(c.st.ID, harness.FileInitScript))
	data, err := c.store.ReadInitScript(c.st.ID)
	var nr *harness.NotRegularError
	switch {
	case errors.As(err, &nr):
		return "", nil
	case err != nil:
		return rel + " was deleted", c.store.RestoreInitScript(c.st.ID, before)
	case len(strings.TrimSpace(string(data))) == 0:
		return rel + " was emptied", c.store.RestoreInitScript(c.st.ID, before)
	}
	return "", nil
}

// checkRecordAfterVerify is checkRecord after the referee ran init.sh and
// the verify command: a change then also undoes what the referee accepted.
func (c *Controller) checkRecordAfterVerify(out *outcome, base *featurelist.List, phase harness.Phase, initScript []byte) error {
	what, err := c.checkRecord(out, "by init.sh or a verify command, run by grub to verify the turn", base, initScript)
	if err != nil || len(what) == 0 {
		return err
	}
	c.st.FeatureListBaseline, c.st.Phase = base, phase
	out.flipped, out.complete = "", false
	return c.restoreIfChanged()
}
