package cli

import (
	"strings"
	"testing"
)

// Shell completion offers the values of the flags that take one of a few
// words, and folders for the flags that take one.
func TestFlagValuesComplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"start", "--sandbox", ""}, []string{"workspace-write\t", "read-only\t", "off\t", ":4"}},
		{[]string{"edit", "--sandbox", "r"}, []string{"read-only\t"}},
		{[]string{"start", "--agent", ""}, []string{"openai\t", "claude\t", "codex\t", "command\t"}},
		{[]string{"resume", "--allow-domain", "@"}, []string{"@go\t", "@npm\t", "@pypi\t"}},
		{[]string{"report", "--format", ""}, []string{"md\t", "json\t"}},
		{[]string{"start", "--locale", ""}, []string{"en\t", "zh\t"}},
		{[]string{"status", "-C", ""}, []string{":16"}}, // folders only
	} {
		ios, _, out, errOut := TestIOStreams()
		if code := Run(append([]string{"__complete"}, tc.args...), ios); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("completion of %q lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}
