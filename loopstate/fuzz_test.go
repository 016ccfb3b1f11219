package loopstate

import (
	"errors"
	"strings"
	"testing"

	"github.com/grub-dev/grub/schemas"
)

// FuzzParse checks that Parse never panics, that every failure is an *Error
// with a message, and that every accepted decision passes the schema, has
// no placeholder values and has the status-specific fields it needs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"no block here",
		Template,
		"<loop-state>{\"status\":\"continue\",\"summary\":\"s\",\"nextStep\":\"n\",\"feature\":\"a\"}</loop-state>",
		"<loop-state>\n```json\n{\"status\":\"complete\",\"summary\":\"s\"}\n```\n</loop-state>",
		"<loop-state>```{\"status\":\"blocked\",\"summary\":\"s\",\"blocker\":\"b\",\"options\":[\"x\"]}```</loop-state> tail",
		"<loop-state>{\"status\":\"continue\",\"summary\":\"s\"}</loop-state>",
		"<loop-state><loop-state>{}</loop-state></loop-state>",
		"</loop-state><loop-state>",
		"<loop-state>{\"status\":\"complete\",\"summary\":\"\\u00e9\",\"Status\":1}</loop-state>",
		"<loop-state>{\"status\":\"complete\",\"summary\":\"<a|b>\"}</loop-state>",
		"<loop-state>[1,2,3]</loop-state>",
		"<loop-state>```json```</loop-state>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, message string) {
		d, err := Parse(message)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *Error: %v", err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := schemas.ValidateGo(schemas.LoopState, fileName, d); err != nil {
			t.Fatalf("accepted decision %+v fails the schema: %v", d, err)
		}
		for _, v := range append([]string{string(d.Status), d.Summary, d.NextStep, d.Feature, d.Blocker, d.Question}, d.Options...) {
			if placeholder(v) {
				t.Fatalf("accepted decision %+v holds placeholder %q", d, v)
			}
		}
		if !strings.Contains(message, OpenTag) || !strings.Contains(message, CloseTag) {
			t.Fatalf("accepted a decision from a message without a complete block: %q", message)
		}
	})
}
