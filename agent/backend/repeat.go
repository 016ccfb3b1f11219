// Repeat detection for the built-in agent: a model that keeps making the
// same tool call and getting the same result is going in circles, and the
// turn ends as a failure rather than spending its requests.

package backend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/grub-dev/grub/agent/tools"
)

// RepeatLimit is how often the same tool call may return the same result
// in one turn; reaching it ends the turn as a failure.
const RepeatLimit = 3

// repeats counts, for one turn, how often each tool call (tool name and
// arguments, ignoring JSON spacing) got each result.
type repeats map[string]int

// check counts one call and its result. It returns an error when that call
// has now had that result RepeatLimit times.
//
// A successful call of a tool that changes the workspace forgets every
// other count: the same check giving the same answer after an edit is
// progress, not a loop. Only a repeat of this very edit still counts.
func (c repeats) check(name, args string, res tools.Result) error {
	key := name + "\x00" + compactJSON(args) + "\x00" + fmt.Sprint(res.IsError) + "\x00" + res.Text
	c[key]++
	n := c[key]
	if n >= RepeatLimit {
		return fmt.Errorf("repeated call: the model called %s with the same arguments %s %d times and got the same result each time", name, clip(args, 200), n)
	}
	if !res.IsError && mutates(name) {
		clear(c)
		c[key] = n
	}
	return nil
}

// mutates reports whether a tool changes the workspace.
func mutates(tool string) bool { return tool == "write_file" || tool == "edit_file" }

// compactJSON removes insignificant space from valid JSON, so that calls
// differing only in spacing count as the same.
func compactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// clip shortens s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
