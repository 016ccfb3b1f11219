package featurelist

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/grub-dev/grub/schemas"
)

// Violation is one broken feature-list rule, worded for the model that broke
// it: the controller shows it in the next prompt and the progress log.
type Violation struct {
	Feature string // the id of the feature concerned; "" for a rule about the whole list
	Field   string // the JSON field concerned: "id", "passes", "evidence", "features", "goal", …; "" for the whole file
	Message string // the complete sentence, naming the feature, e.g. "feature `login-form`: description changed"
}

// String returns the violation's message.
func (v Violation) String() string { return v.Message }

// Describe joins violations into one message for a prompt or a log entry:
// "" for none, the message itself for one, and a numbered list on one line
// for several.
func Describe(vs []Violation) string {
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0].Message
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rule violations: ", len(vs))
	for i, v := range vs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "(%d) %s", i+1, v.Message)
	}
	return b.String()
}

// MaxIDLength is the longest id the schema accepts.
const MaxIDLength = 80

var kebabRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// label names a feature in a message: by id, or by position when the id is
// empty.
func label(id string, index int) string {
	if id == "" {
		return fmt.Sprintf("feature #%d", index+1)
	}
	return "feature `" + id + "`"
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

func blankPtr(p *string) bool { return p == nil || blank(*p) }

type collector []Violation

func (c *collector) add(feature, field, format string, args ...any) {
	*c = append(*c, Violation{Feature: feature, Field: field, Message: fmt.Sprintf(format, args...)})
}

// CheckInitial applies the initializer rules to the list an initializer
// turn wrote, and returns every violation (nil when the list is
// acceptable):
//
//   - version is 1, and the goal equals the task goal (white space at either
//     end ignored);
//   - between min and max features;
//   - ids unique, kebab-case (^[a-z0-9]+(-[a-z0-9]+)*$), at most
//     MaxIDLength characters, and not a template id such as "feature-id";
//   - every passes is false and every evidence is null;
//   - category and description non-blank, at least one step, every step
//     non-blank, verify (optional) non-blank when present;
//   - no placeholder text in category, description, steps or verify (see
//     placeholder for the exact rule).
func CheckInitial(l *List, goal string, min, max int) []Violation {
	var c collector
	if l == nil {
		c.add("", "", "the feature list is missing; write %s with between %d and %d features", FileName, min, max)
		return c
	}
	if l.Version != 1 {
		c.add("", "version", "version is %d; it must be 1", l.Version)
	}
	if strings.TrimSpace(l.Goal) != strings.TrimSpace(goal) {
		c.add("", "goal", "goal does not match the task goal; set it to exactly %s", quote(goal))
	}
	switch n := len(l.Features); {
	case n < min:
		c.add("", "features", "the list has %d features; it needs at least %d: split the goal into more, smaller verifiable features", n, min)
	case n > max:
		c.add("", "features", "the list has %d features; it may have at most %d: merge closely related features", n, max)
	}
	seen := make(map[string]int, len(l.Features))
	for _, f := range l.Features {
		seen[f.ID]++
	}
	reported := make(map[string]bool)
	for i, f := range l.Features {
		name := label(f.ID, i)
		switch {
		case f.ID == "":
			c.add(f.ID, "id", "%s: id is empty; give it a unique kebab-case id such as `user-login`", name)
		case !kebabRE.MatchString(f.ID):
			c.add(f.ID, "id", "%s: id is not kebab-case; use lowercase letters, digits and single hyphens, e.g. `user-login`", name)
		case len(f.ID) > MaxIDLength:
			c.add(f.ID, "id", "%s: id is %d characters long; use at most %d", name, len(f.ID), MaxIDLength)
		case placeholderIDs[f.ID]:
			c.add(f.ID, "id", "%s: id is placeholder text; name the feature after what it does", name)
		}
		if n := seen[f.ID]; n > 1 && f.ID != "" && !reported[f.ID] {
			reported[f.ID] = true
			c.add(f.ID, "id", "%s: id is used by %d features; ids must be unique", name, n)
		}
		if f.Passes {
			c.add(f.ID, "passes", "%s: passes is true; every feature must start with passes false", name)
		}
		if f.Evidence != nil {
			c.add(f.ID, "evidence", "%s: evidence is set; it must be null until the feature is verified", name)
		}
		checkText(&c, f.ID, name, "category", f.Category)
		checkText(&c, f.ID, name, "description", f.Description)
		if len(f.Steps) == 0 {
			c.add(f.ID, "steps", "%s: has no steps; list the steps that show it works", name)
		}
		for j, s := range f.Steps {
			checkText(&c, f.ID, name, fmt.Sprintf("step %d", j+1), s)
		}
		if f.Verify != "" {
			checkText(&c, f.ID, name, "verify", f.Verify)
		}
	}
	return c
}

// checkText reports a blank or placeholder text field. what names it in the
// message ("description", "step 2"); the Field is the JSON field.
func checkText(c *collector, id, name, what, s string) {
	field := what
	if strings.HasPrefix(what, "step ") {
		field = "steps"
	}
	switch {
	case blank(s):
		c.add(id, field, "%s: %s is blank", name, what)
	case placeholder(s):
		c.add(id, field, "%s: %s is placeholder text (%s); write the real %s", name, what, quote(strings.TrimSpace(s)), what)
	}
}

// Change is what an execution turn changed in the passes fields, by feature
// id (the id before the turn).
type Change struct {
	Flipped   []string // features that went from passes false to true
	Regressed []string // features that went from passes true to false
	// After is the list as the turn left it, when CheckTurnBytes could
	// parse it (CheckTurn leaves it nil: the caller has the list).
	After *List
}

// CheckTurn applies the execution-turn rules to the list before and after
// a turn, and returns the passes changes together with every violation
// (nil when the turn's edit is legal):
//
//   - version and goal, the number and order of features, and every id,
//     category, description, steps and verify are immutable;
//   - at most one feature may go from passes false to true, and it must
//     carry new evidence;
//   - a feature may go from true to false only with new evidence (what
//     failed);
//   - a feature that passes before and after must keep non-blank evidence
//     (changing it is fine).
//
// "New evidence" is non-blank and different from the evidence before the
// turn: stale evidence does not justify a change of verdict.
//
// Features are matched by id (the n-th feature with an id before to the
// n-th with that id after). A feature whose id changed while keeping its
// position and its description or steps, in a list of unchanged length, is
// reported as an id change; otherwise unmatched features are reported as
// removed or added, and matched features in a different relative order as
// reordered. Matched features are still compared field by field, so every
// violation is listed.
// Change is computed over matched features even when there are violations.
// A nil after list counts as a deleted file; a nil before list as an empty
// one.
func CheckTurn(before, after *List) (Change, []Violation) {
	var ch Change
	var c collector
	if after == nil {
		c.add("", "", "%s was deleted; restore it and change only `passes` and `evidence`", FileName)
		return ch, c
	}
	if before == nil {
		before = &List{}
	}
	if before.Version != after.Version {
		c.add("", "version", "version changed (%d to %d); it is immutable", before.Version, after.Version)
	}
	if before.Goal != after.Goal {
		c.add("", "goal", "goal changed; it is immutable")
	}

	pairs := matchFeatures(&c, before.Features, after.Features)
	var flipped []string
	for _, p := range pairs {
		bf, af := before.Features[p.b], after.Features[p.a]
		name := label(bf.ID, p.b)
		if bf.ID != af.ID {
			c.add(bf.ID, "id", "%s: id changed to `%s`; ids are immutable", name, af.ID)
		}
		if bf.Category != af.Category {
			c.add(bf.ID, "category", "%s: category changed", name)
		}
		if bf.Description != af.Description {
			c.add(bf.ID, "description", "%s: description changed", name)
		}
		if !slices.Equal(bf.Steps, af.Steps) {
			c.add(bf.ID, "steps", "%s: steps changed", name)
		}
		if bf.Verify != af.Verify {
			c.add(bf.ID, "verify", "%s: verify changed", name)
		}
		switch {
		case !bf.Passes && af.Passes:
			flipped = append(flipped, bf.ID)
			if msg := evidenceProblem(bf.Evidence, af.Evidence); msg != "" {
				c.add(bf.ID, "evidence", "%s: passes flipped to true %s; put in `evidence` what you ran and what it showed", name, msg)
			}
		case bf.Passes && !af.Passes:
			ch.Regressed = append(ch.Regressed, bf.ID)
			if msg := evidenceProblem(bf.Evidence, af.Evidence); msg != "" {
				c.add(bf.ID, "evidence", "%s: passes flipped to false %s; put in `evidence` what failed", name, msg)
			}
		case bf.Passes && af.Passes:
			if !blankPtr(bf.Evidence) && blankPtr(af.Evidence) {
				c.add(bf.ID, "evidence", "%s: evidence removed from a passing feature", name)
			}
		}
	}
	ch.Flipped = flipped
	if len(flipped) > 1 {
		c.add("", "passes", "%d features flipped to passing (%s); at most one per turn", len(flipped), strings.Join(flipped, ", "))
	}
	return ch, c
}

// evidenceProblem explains why after is not new evidence compared with
// before, or returns "".
func evidenceProblem(before, after *string) string {
	switch {
	case after == nil:
		return "without evidence"
	case blank(*after):
		return "with blank evidence"
	case before != nil && strings.TrimSpace(*before) == strings.TrimSpace(*after):
		return "without new evidence (evidence is unchanged from before the turn)"
	}
	return ""
}

type pair struct{ b, a int }

type occurrence struct {
	id string
	n  int // 0 for the first feature with this id, 1 for the second, …
}

func occurrences(fs []Feature) []occurrence {
	count := make(map[string]int, len(fs))
	out := make([]occurrence, len(fs))
	for i, f := range fs {
		out[i] = occurrence{f.ID, count[f.ID]}
		count[f.ID]++
	}
	return out
}

// matchFeatures pairs the features before and after a turn, reports
// removed, added and reordered features, and returns the pairs in the order
// of the list before the turn.
func matchFeatures(c *collector, before, after []Feature) []pair {
	if sameIDs(before, after) { // every turn's list but a broken one: each feature is its own match
		pairs := make([]pair, len(before))
		for i := range pairs {
			pairs[i] = pair{i, i}
		}
		return pairs
	}
	bo, ao := occurrences(before), occurrences(after)
	afterAt := make(map[occurrence]int, len(after))
	for j, o := range ao {
		afterAt[o] = j
	}
	bPaired := make([]bool, len(before))
	aPaired := make([]bool, len(after))
	var pairs []pair
	for i, o := range bo {
		if j, ok := afterAt[o]; ok {
			pairs = append(pairs, pair{i, j})
			bPaired[i], aPaired[j] = true, true
		}
	}
	// An id edited in place: same length, same position, neither id matched,
	// and the description or the steps kept. Anything else is a replacement.
	if len(before) == len(after) {
		for i := range before {
			if !bPaired[i] && !aPaired[i] && sameContent(before[i], after[i]) {
				pairs = append(pairs, pair{i, i})
				bPaired[i], aPaired[i] = true, true
			}
		}
		sort.Slice(pairs, func(x, y int) bool { return pairs[x].b < pairs[y].b })
	}
	for i, f := range before {
		if !bPaired[i] {
			c.add(f.ID, "features", "%s removed; features may not be removed after the initializer turn", label(f.ID, i))
		}
	}
	for j, f := range after {
		if aPaired[j] {
			continue
		}
		if ao[j].n > 0 {
			c.add(f.ID, "features", "%s added again (a second feature with this id); features may not be added or duplicated", label(f.ID, j))
		} else {
			c.add(f.ID, "features", "%s added; features may not be added after the initializer turn", label(f.ID, j))
		}
	}
	for k := 1; k < len(pairs); k++ {
		if pairs[k].a < pairs[k-1].a {
			c.add("", "features", "features reordered; keep every feature in its original position")
			break
		}
	}
	return pairs
}

// sameIDs reports whether before and after have the same ids in the same
// order: then the n-th feature with an id before is the n-th with it
// after, at the same position, and matchFeatures pairs each with itself.
func sameIDs(before, after []Feature) bool {
	if len(before) != len(after) {
		return false
	}
	for i := range before {
		if before[i].ID != after[i].ID {
			return false
		}
	}
	return true
}

// sameContent reports whether two features at the same position are one
// feature with an edited id rather than a replacement.
func sameContent(b, a Feature) bool {
	return b.Description == a.Description || slices.Equal(b.Steps, a.Steps)
}

// CheckTurnBytes is CheckTurn for the raw bytes of the feature list after a
// turn. A document the controller cannot use is the agent's rule break, not
// an error: a deleted or empty file (nil or white-space data), invalid JSON
// or a schema violation each come back as a single Violation whose message
// carries the parse error, so the controller restores the file and fails the
// turn like any other violation. file names the document in that message.
//
// beforeData is before's bytes as Marshal writes them (the harness holds
// them: harness.Store.ListBytes). When afterData differs from them only
// inside one feature's object, only that feature is read (edit.go); the
// verdict and the list are those of the full parse, which reads any other
// edit, and every edit when beforeData is nil. Bytes that are not
// Marshal(before) must not be passed: the rest of the list is taken to be
// before's.
//
// The error return is only for the machinery failing: a nil before list or
// a schema that cannot be loaded. Violations are nil when the edit is legal.
func CheckTurnBytes(file string, before *List, beforeData, afterData []byte) (Change, []Violation, error) {
	var err error
	if before == nil {
		return Change{}, nil, errors.New("featurelist: CheckTurnBytes needs the list from before the turn")
	}
	if len(bytes.TrimSpace(afterData)) == 0 {
		return Change{}, []Violation{{
			Message: fmt.Sprintf("%s was deleted or emptied; it must keep every feature, changing only `passes` and `evidence`", file),
		}}, nil
	}
	after, ok := parseEdit(before, beforeData, afterData)
	if !ok {
		after, err = Parse(file, afterData)
	}
	if err != nil {
		var se *schemas.Error
		if !errors.As(err, &se) {
			return Change{}, nil, err
		}
		return Change{}, []Violation{{
			Message: fmt.Sprintf("the feature list is no longer valid: %v; keep its JSON shape and change only `passes` and `evidence`", err),
		}}, nil
	}
	ch, vs := CheckTurn(before, after)
	ch.After = after
	return ch, vs, nil
}
