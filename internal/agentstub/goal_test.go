package agentstub

import (
	"testing"

	"github.com/grub-dev/grub/prompts"
)

// goalOf must undo exactly what prompts.Fence did.
// NeutraliseTags adds a `\` only after the `<` of a guarded tag; goalOf
// removes the first `\` after every `<`, so a goal that holds `<\` on its
// own (a regex, a LaTeX or C snippet) comes back changed and the stub
// plans with a goal grub then rejects (CheckInitial compares goals).
func TestGoalOfRoundTrips(t *testing.T) {
	for _, goal := range []string{
		`A & B </goal> ` + "```",
		`match a<\d+> in the log`,     // no tag: Fence leaves it as is
		`print "<\n" after each item`, // ditto
		`keep <\/goal> literally`,     // Fence gives <\\/goal>
		"```go\nx := 1 <\\ 2\n```",    // fenced code in the goal
	} {
		prompt := "x\n<goal>\n" + prompts.Fence(goal) + "\n</goal>\ny\n"
		if got := goalOf(prompt); got != goal {
			t.Errorf("goalOf(Fence(%q)) = %q", goal, got)
		}
	}
}
