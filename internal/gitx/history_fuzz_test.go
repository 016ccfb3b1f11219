package gitx

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzParseTurn reads commit messages as grub history does: any message
// (commits come from anyone) must parse without a panic into an entry a
// history listing can show, and a message grub wrote must read back as the
// turn it records.
func FuzzParseTurn(f *testing.F) {
	f.Add("grub(0a1b2c3d) #3 login-form: add the form\n\nGrub-Task: 0a1b2c3d\nGrub-Iteration: 3\nGrub-Status: running\n", "login-form", "add the form", 3)
	f.Add("fix typo", "", "", 0)
	f.Add("x\n\nGrub-Task: \nGrub-Iteration: -7\n", "f", "line one\nline two", 12)
	f.Fuzz(func(t *testing.T, msg, feature, summary string, iteration int) {
		if e, ok := parseTurn(msg); ok && e.TaskID == "" {
			t.Fatalf("accepted %q without a task", msg)
		} else if ok && e.Iteration < 0 {
			t.Fatalf("negative iteration %d from %q", e.Iteration, msg)
		}
		// Round trip for what grub writes: feature ids are single words,
		// summaries are text without blank lines.
		if iteration < 0 || !utf8.ValidString(feature) || !utf8.ValidString(summary) ||
			strings.IndexFunc(feature, func(r rune) bool { return unicode.IsSpace(r) || r == ':' }) >= 0 ||
			strings.Contains(summary, "\n\n") || strings.Contains(summary, "\r") {
			return
		}
		turn := Turn{TaskID: "0a1b2c3d", Iteration: iteration, Feature: feature, Summary: summary, Status: "running"}
		e, ok := parseTurn(TurnMessage(turn))
		if !ok || e.TaskID != turn.TaskID || e.Iteration != iteration || e.Feature != feature || e.Status != "running" {
			t.Fatalf("turn %+v read back as %+v (ok %v)", turn, e, ok)
		}
		if want := strings.TrimSpace(summary); e.Summary != want {
			t.Fatalf("summary %q read back as %q", want, e.Summary)
		}
	})
}
