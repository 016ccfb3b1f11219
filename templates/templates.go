package templates

import (
	"embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/grub-dev/grub/loopstate"
)

// InitScript is the starter init.sh the harness writes for a new task. Its
// "project smoke check" section fails until the initializer replaces it, so
// an unfilled template can never pass verification.
//
//go:embed init.sh
var InitScript string

//go:embed *.md.tmpl
var files embed.FS

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"code":   Code,
	"indent": func(s string) string { return indentLines(s, "  ") },
	"quote":  quote,
	"trim":   strings.TrimSpace,
	"time":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"usage":  usageLine,
}).ParseFS(files, "*.md.tmpl"))

func render(name string, data any) (string, error) {
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("templates: render %s: %w", name, err)
	}
	return b.String(), nil
}

// ProgressLogHeader is the first text of a task's progress-log.md.
func ProgressLogHeader(id, goal string) string {
	s, err := render("progress-log-header.md.tmpl", struct{ ID, Goal string }{id, goal})
	if err != nil {
		// The template is fixed and its data are two strings: a failure
		// here is a bug in this package, caught by its tests.
		panic(err)
	}
	return s
}

// Entry is one turn's record in progress-log.md. Empty fields are left out.
type Entry struct {
	Iteration    int
	Phase        string           // "initializer" or "execution"
	Feature      string           // the feature the turn worked on, if known
	Decision     loopstate.Status // the accepted status (continue, complete, blocked, unknown, failed, cancelled) or an event (edit, steer …)
	Summary      string
	NextStep     string
	Verification string // e.g. "init.sh passed; verify `go test ./auth` passed"
	Failure      string // why the turn counts as a failure, if it does
	At           time.Time
	Note         string // free text appended after the fields (goal edits, steering, recovery)

	InputTokens       int64
	CachedInputTokens int64
	OutputTokens      int64
	Requests          int64 // model requests; 0 when the backend does not say (left out)
	Elapsed           time.Duration
	UsageEstimated    bool // some request's usage was estimated
	// CostUSD is what the provider charged for the turn, shown when the
	// backend reported it (CostReported).
	CostUSD      float64
	CostReported bool
	// Refused are the hosts the network allowlist refused during the
	// turn, formatted ("example.org ×3"); empty: none.
	Refused string
}

// RenderEntry renders e as a markdown section that starts with a blank line,
// ready to append to progress-log.md:
//
//	## Turn 3: execution, feature `login-form`
//
//	- Decision: continue
//	- Summary: …
func RenderEntry(e Entry) (string, error) {
	if e.Iteration < 0 {
		return "", fmt.Errorf("templates: progress-log entry has negative iteration %d", e.Iteration)
	}
	if strings.TrimSpace(e.Phase) == "" {
		return "", fmt.Errorf("templates: progress-log entry for turn %d has no phase", e.Iteration)
	}
	s, err := render("entry.md.tmpl", e)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(s, "\n") + "\n", nil
}

// ChecklistItem is one feature as the checklist shows it.
type ChecklistItem struct {
	ID          string
	Category    string
	Description string
	Passes      bool
	Evidence    string
}

type categoryCount struct {
	Name           string
	Passing, Total int
}

// RenderChecklist renders feature-checklist.md. A nil items slice means the
// initializer has not written a feature list yet; an empty non-nil slice is a
// list without features.
func RenderChecklist(goal string, items []ChecklistItem) (string, error) {
	return renderChecklist(goal, items, lastChecklist.itemLines(items))
}

// renderChecklist is RenderChecklist with the items' lines given, in
// order: itemLine of each item, or any other split of their concatenation. The template writes all but
// the lines, which come after it: handing 2,000 of them to the template
// as one string cost three more copies of them.
func renderChecklist(goal string, items []ChecklistItem, lines []string) (string, error) {
	data := struct {
		Goal           string
		Planned        bool
		Items          []ChecklistItem
		Passing, Total int
		Categories     []categoryCount
	}{Goal: goal, Planned: items != nil, Items: items, Total: len(items)}
	index := map[string]int{}
	for _, it := range items {
		if it.Passes {
			data.Passing++
		}
		if it.Category == "" {
			continue
		}
		i, ok := index[it.Category]
		if !ok {
			i = len(data.Categories)
			index[it.Category] = i
			data.Categories = append(data.Categories, categoryCount{Name: it.Category})
		}
		data.Categories[i].Total++
		if it.Passes {
			data.Categories[i].Passing++
		}
	}
	head, err := render("checklist.md.tmpl", data)
	if err != nil || len(items) == 0 {
		return head, err
	}
	size := len(head) + 1
	for _, l := range lines {
		size += len(l)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(head)
	for _, l := range lines {
		b.WriteString(l)
	}
	b.WriteByte('\n')
	return b.String(), nil
}

// itemLine is one item's line, after a newline. The lines are written
// here rather than by a range in the template, which took most of a turn's
// checklist time on a list of 2,000 features.
func itemLine(it ChecklistItem) string {
	var b strings.Builder
	writeItemLine(&b, it)
	return b.String()
}

func writeItemLine(b *strings.Builder, it ChecklistItem) {
	b.WriteString("\n- [")
	if it.Passes {
		b.WriteByte('x')
	} else {
		b.WriteByte(' ')
	}
	b.WriteString("] ")
	b.WriteString(Code(it.ID))
	b.WriteString(": ")
	b.WriteString(indentLines(it.Description, "  "))
	if it.Evidence != "" {
		b.WriteString("\n  - evidence: ")
		b.WriteString(indentLines(it.Evidence, "    "))
	}
}

// A turn changes one feature of a list of maybe 2,000, and rendering every
// item's line took most of a turn's checklist time. So RenderChecklist
// remembers the items of its last call and their lines: an item equal to
// one of them (ChecklistItem is comparable, and a line depends on its
// item alone) reuses that line, and only new items are rendered. Only the
// last call is kept, so the memory is one checklist's.
var lastChecklist lineCache

type lineCache struct {
	mu       sync.Mutex
	items    []ChecklistItem // the last call's items (a copy)
	lines    []string        // lines[i] is itemLine(items[i]); never changed once kept
	rendered int             // lines the last call rendered, for tests
}

// itemLines are itemLine of each of items, rendering only the items the
// last call did not have. The caller must
// not change the slice.
func (c *lineCache) itemLines(items []ChecklistItem) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	lines := make([]string, len(items))
	// Most items are where they were: compare in place first.
	var moved []int
	for i, it := range items {
		if i < len(c.items) && c.items[i] == it {
			lines[i] = c.lines[i]
		} else {
			moved = append(moved, i)
		}
	}
	c.rendered = 0
	if len(moved) > 0 {
		// The last call's items that were not matched in place.
		old := make(map[ChecklistItem]string, len(moved))
		for i, it := range c.items {
			if i >= len(items) || items[i] != it {
				old[it] = c.lines[i]
			}
		}
		for _, i := range moved {
			line, ok := old[items[i]]
			if !ok {
				line = itemLine(items[i])
				old[items[i]] = line
				c.rendered++
			}
			lines[i] = line
		}
	}
	// The copy reuses the last one's array; clearing the rest of it keeps
	// no older item's strings alive.
	kept := append(c.items[:0], items...)
	clear(kept[len(kept):cap(kept)])
	c.items, c.lines = kept, lines
	return lines
}

// Code renders s as a markdown code span, choosing a backtick fence longer
// than any run of backticks inside s.
func Code(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.TrimSpace(s) != "" {
		// A space on each side keeps a leading or trailing backtick
		// apart from the fence; markdown strips one space each side.
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// indentLines trims s and indents every line after the first by prefix, so
// that multi-line text stays inside a markdown list item. Blank lines stay
// empty.
func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = strings.TrimRight(lines[i], " \t\r")
		if lines[i] != "" {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// quote renders s as a markdown block quote.
func quote(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// usageLine summarises an entry's usage, or returns "" when it has none.
func usageLine(e Entry) string {
	if e.InputTokens == 0 && e.CachedInputTokens == 0 && e.OutputTokens == 0 && e.Requests == 0 && e.Elapsed == 0 && !e.CostReported {
		return ""
	}
	used := e.InputTokens - e.CachedInputTokens + e.OutputTokens
	var b strings.Builder
	fmt.Fprintf(&b, "%s tokens (%s input, %s cached, %s output)",
		group(used), group(e.InputTokens), group(e.CachedInputTokens), group(e.OutputTokens))
	if e.Requests > 0 {
		fmt.Fprintf(&b, ", %s %s", group(e.Requests), plural(e.Requests, "request", "requests"))
	}
	if e.CostReported {
		fmt.Fprintf(&b, ", cost %s", FormatUSD(e.CostUSD))
	}
	if e.Elapsed > 0 {
		fmt.Fprintf(&b, ", %s", e.Elapsed.Round(time.Second))
	}
	if e.UsageEstimated {
		b.WriteString(" (estimated)")
	}
	return b.String()
}

// FormatUSD renders US dollars for people: cents from a dollar up
// ("$12.30"), else up to four decimals ("$0.0042", "$0.50"), and
// "<$0.0001" for a smaller non-zero amount.
func FormatUSD(usd float64) string {
	switch {
	case usd >= 1 || usd == 0:
		return fmt.Sprintf("$%.2f", usd)
	case usd > 0 && usd < 0.00005:
		return "<$0.0001"
	}
	s := fmt.Sprintf("%.4f", usd)
	for strings.HasSuffix(s, "0") && len(s) > len("0.00") {
		s = strings.TrimSuffix(s, "0")
	}
	return "$" + s
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// group formats n with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
