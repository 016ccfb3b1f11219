package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"
)

// Caps on text that could otherwise grow without bound. A prompt's size
// depends on the goal, the user's guidance and these caps, never on the
// number of features.
const (
	// MaxOutputTail is the most of a command's output a prompt shows; the
	// end of the output is kept.
	MaxOutputTail = 2000
	// MaxNote is the most of a controller note (failure, rejected
	// completion, reported blocker) a prompt shows; the head and the tail
	// are kept.
	MaxNote = 4000
	// MaxField is the most of one field of the last decision, of a
	// feature's description or of its verify command a prompt shows.
	MaxField = 1000
	// MaxStep is the most of one step of a feature a prompt shows.
	MaxStep = 500
	// MaxSteps is the most steps of a feature a prompt lists; the rest are
	// counted and left in feature-list.json.
	MaxSteps = 30
)

// Locales are the prompt languages grub ships, in the order error messages
// list them.
var Locales = []string{"en", "zh"}

// Paths are the harness files a prompt names, relative to the workspace
// root (the agent's working directory).
type Paths struct {
	HarnessDir  string // .grub/<id>
	FeatureList string // .grub/<id>/feature-list.json
	ProgressLog string // .grub/<id>/progress-log.md
	InitScript  string // .grub/<id>/init.sh
	Checklist   string // .grub/<id>/feature-checklist.md
	StateFile   string // .grub/<id>/state.json
}

// GoalChange is an edit of the goal (grub edit) that the next prompt
// reports once. New must equal the prompt's Goal (or be empty).
type GoalChange struct{ Old, New string }

// Initializer is the data of the initializer prompt: the first turn, which
// writes feature-list.json and init.sh and implements nothing.
type Initializer struct {
	Locale      string // "en" or "zh"
	TaskID      string
	Goal        string // the user's goal; rendered escaped, as data
	Paths       Paths
	MinFeatures int
	MaxFeatures int
	Iteration   int
	// Failure is why the previous initializer attempt was rejected; "" on
	// the first attempt.
	Failure string
	// RecoveredUnknownTurn is set when the previous run died during an
	// initializer turn: its files may be half written.
	RecoveredUnknownTurn bool
	ObjectiveUpdated     *GoalChange
	Steer                []string // guidance queued by the user, each quoted once
	Answer               string   // the user's answer to the agent's question
	Question             string   // the question Answer answers, if known
}

// FeatureRef is the one feature an execution prompt proposes.
type FeatureRef struct {
	ID, Category, Description string
	Steps                     []string
	Verify                    string // "" when the feature has no verify command
}

// Check is the result of a command the controller ran (init.sh).
type Check struct {
	Command    string
	ExitCode   int
	Passed     bool
	TimedOut   bool
	OutputTail string // clipped to its last MaxOutputTail bytes when rendered
}

// Decision is the outcome of the previous turn as the controller recorded
// it.
type Decision struct{ Status, Summary, NextStep, Blocker, Question string }

// Execution is the data of an execution prompt. It holds counts and the
// one proposed feature, never the feature list, so the prompt stays small
// however long the list is.
type Execution struct {
	Locale        string
	TaskID        string
	Goal          string // the current goal; rendered escaped, as data
	Paths         Paths
	Iteration     int
	MaxIterations int
	Passing       int
	Total         int
	// Next is the proposed next feature (the first pending one); nil when
	// every feature passes.
	Next         *FeatureRef
	LastInit     *Check // the last init.sh result; nil if it never ran
	LastDecision *Decision
	// Failure says why the previous turn failed: an illegal feature-list
	// edit, a failed verification with its output, a bad loop-state block.
	Failure string
	// RecoveredUnknownTurn is set when the previous run died mid-turn: the
	// agent must observe the workspace, not assume failure, not replay.
	RecoveredUnknownTurn bool
	// CompletionRejected is set when the agent claimed complete while
	// features are pending: the controller's message.
	CompletionRejected string
	// BlockedReexamine is the blocker the agent reported and grub has not
	// accepted yet.
	BlockedReexamine string
	ObjectiveUpdated *GoalChange
	Steer            []string // guidance queued by the user, each quoted once
	Answer           string   // the user's answer to the agent's question
	Question         string   // the question Answer answers, if known
	TokensUsed       int64
	TokenBudget      int64 // 0 = no budget
}

// WrapUp is the data of the last request of a built-in agent turn whose
// budget is spent: summarise, do no new work, emit the loop-state block.
type WrapUp struct {
	Locale string
	Reason string // why the turn must end, e.g. "the token budget is spent"
}

//go:embed templates/en/*.tmpl templates/zh/*.tmpl
var files embed.FS

// locale is one language: its parsed templates and the marker put where
// text was cut out.
type locale struct {
	tmpl *template.Template
	cut  string // fmt format with one %d: the number of bytes cut
}

var cutMarkers = map[string]string{
	"en": "[… %d bytes cut …]",
	"zh": "[…… 此处省略 %d 字节 ……]",
}

var (
	parseOnce sync.Once
	parsed    map[string]*locale
	parseErr  error
)

var funcs = template.FuncMap{
	"add1": func(i int) int { return i + 1 },
}

func parseAll() {
	parsed = make(map[string]*locale, len(Locales))
	for _, name := range Locales {
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").
			ParseFS(files, "templates/"+name+"/*.tmpl")
		if err != nil {
			parseErr = fmt.Errorf("prompts: parse %s templates: %w", name, err)
			return
		}
		parsed[name] = &locale{tmpl: t, cut: cutMarkers[name]}
	}
}

func lookup(name string) (*locale, error) {
	parseOnce.Do(parseAll)
	if parseErr != nil {
		return nil, parseErr
	}
	l, ok := parsed[name]
	if !ok {
		quoted := make([]string, len(Locales))
		for i, n := range Locales {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		return nil, fmt.Errorf("prompts: unknown locale %q: use one of %s", name, strings.Join(quoted, ", "))
	}
	return l, nil
}

func (l *locale) execute(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := l.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// EscapeUntrusted makes s safe to place inside a tagged block of a prompt:
// &, < and > become &amp;, &lt; and &gt;, so s can neither close the block
// (</goal>) nor forge a tag such as <loop-state>. Prompts tell the model
// about this escaping.
func EscapeUntrusted(s string) string { return escaper.Replace(s) }

// RenderInitializer renders the initializer prompt.
func RenderInitializer(p Initializer) (string, error) {
	l, err := lookup(p.Locale)
	if err != nil {
		return "", err
	}
	if err := checkGoalChange(p.Goal, p.ObjectiveUpdated); err != nil {
		return "", err
	}
	v := initView{
		TaskID:           EscapeUntrusted(p.TaskID),
		Goal:             EscapeUntrusted(p.Goal),
		Paths:            newPathsView(p.Paths),
		MinFeatures:      p.MinFeatures,
		MaxFeatures:      p.MaxFeatures,
		Iteration:        p.Iteration,
		Failure:          l.note(p.Failure),
		Recovered:        p.RecoveredUnknownTurn,
		ObjectiveUpdated: goalChangeView(p.ObjectiveUpdated),
		Steer:            escapeAll(p.Steer),
		Answer:           EscapeUntrusted(strings.TrimSpace(p.Answer)),
		Question:         l.field(p.Question, MaxField),
	}
	return l.execute("initializer", v)
}

// RenderExecution renders the execution prompt.
func RenderExecution(p Execution) (string, error) {
	l, err := lookup(p.Locale)
	if err != nil {
		return "", err
	}
	if err := checkGoalChange(p.Goal, p.ObjectiveUpdated); err != nil {
		return "", err
	}
	v := execView{
		TaskID:             EscapeUntrusted(p.TaskID),
		Goal:               EscapeUntrusted(p.Goal),
		Paths:              newPathsView(p.Paths),
		Iteration:          p.Iteration,
		MaxIterations:      p.MaxIterations,
		Passing:            p.Passing,
		Total:              p.Total,
		Failure:            l.note(p.Failure),
		Recovered:          p.RecoveredUnknownTurn,
		CompletionRejected: l.note(p.CompletionRejected),
		BlockedReexamine:   l.note(p.BlockedReexamine),
		ObjectiveUpdated:   goalChangeView(p.ObjectiveUpdated),
		Steer:              escapeAll(p.Steer),
		Answer:             EscapeUntrusted(strings.TrimSpace(p.Answer)),
		Question:           l.field(p.Question, MaxField),
		TokensUsed:         p.TokensUsed,
		TokenBudget:        p.TokenBudget,
	}
	if p.TokenBudget > 0 {
		v.TokensPercent = p.TokensUsed * 100 / p.TokenBudget
	}
	if f := p.Next; f != nil {
		fv := &featureView{
			ID:          EscapeUntrusted(f.ID),
			Category:    EscapeUntrusted(f.Category),
			Description: l.field(f.Description, MaxField),
			Verify:      l.field(f.Verify, MaxField),
		}
		steps := f.Steps
		if len(steps) > MaxSteps {
			fv.MoreSteps = len(steps) - MaxSteps
			steps = steps[:MaxSteps]
		}
		for _, s := range steps {
			fv.Steps = append(fv.Steps, l.field(s, MaxStep))
		}
		v.Next = fv
	}
	if c := p.LastInit; c != nil {
		tail, cut := clipOutput(strings.TrimRight(c.OutputTail, " \t\r\n"), MaxOutputTail)
		v.LastInit = &checkView{
			Command:    l.field(c.Command, MaxField),
			ExitCode:   c.ExitCode,
			Passed:     c.Passed,
			TimedOut:   c.TimedOut,
			OutputTail: EscapeUntrusted(tail),
			Cut:        cut,
		}
	}
	if d := p.LastDecision; d != nil {
		v.LastDecision = &Decision{
			Status:   l.field(d.Status, MaxField),
			Summary:  l.field(d.Summary, MaxField),
			NextStep: l.field(d.NextStep, MaxField),
			Blocker:  l.field(d.Blocker, MaxField),
			Question: l.field(d.Question, MaxField),
		}
	}
	return l.execute("execution", v)
}

// RenderWrapUp renders the wrap-up request a built-in agent sends when the
// budget is spent mid-turn.
func RenderWrapUp(p WrapUp) (string, error) {
	l, err := lookup(p.Locale)
	if err != nil {
		return "", err
	}
	return l.execute("wrapup", wrapView{Reason: l.field(p.Reason, MaxField)})
}

func checkGoalChange(goal string, c *GoalChange) error {
	if c != nil && c.New != "" && c.New != goal {
		return fmt.Errorf("prompts: ObjectiveUpdated.New %q differs from Goal %q: pass the current goal in Goal", c.New, goal)
	}
	return nil
}

// The views below are what templates see: every string in them is already
// clipped and escaped, so a template cannot forget to.

type pathsView struct {
	HarnessDir, FeatureList, ProgressLog, InitScript, Checklist, StateFile string
}

func newPathsView(p Paths) pathsView {
	return pathsView{
		HarnessDir:  EscapeUntrusted(p.HarnessDir),
		FeatureList: EscapeUntrusted(p.FeatureList),
		ProgressLog: EscapeUntrusted(p.ProgressLog),
		InitScript:  EscapeUntrusted(p.InitScript),
		Checklist:   EscapeUntrusted(p.Checklist),
		StateFile:   EscapeUntrusted(p.StateFile),
	}
}

type initView struct {
	TaskID, Goal             string
	Paths                    pathsView
	MinFeatures, MaxFeatures int
	Iteration                int
	Failure                  string
	Recovered                bool
	ObjectiveUpdated         *GoalChange
	Steer                    []string
	Answer, Question         string
}

type featureView struct {
	ID, Category, Description string
	Steps                     []string
	MoreSteps                 int
	Verify                    string
}

type checkView struct {
	Command    string
	ExitCode   int
	Passed     bool
	TimedOut   bool
	OutputTail string
	Cut        int // bytes cut from the front of the output
}

type execView struct {
	TaskID, Goal             string
	Paths                    pathsView
	Iteration, MaxIterations int
	Passing, Total           int
	Next                     *featureView
	LastInit                 *checkView
	LastDecision             *Decision
	Failure                  string
	Recovered                bool
	CompletionRejected       string
	BlockedReexamine         string
	ObjectiveUpdated         *GoalChange
	Steer                    []string
	Answer, Question         string
	TokensUsed, TokenBudget  int64
	TokensPercent            int64
}

type wrapView struct{ Reason string }

func goalChangeView(c *GoalChange) *GoalChange {
	if c == nil {
		return nil
	}
	return &GoalChange{Old: EscapeUntrusted(c.Old), New: EscapeUntrusted(c.New)}
}

// escapeAll escapes each non-blank message and drops blank ones.
func escapeAll(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, EscapeUntrusted(m))
		}
	}
	return out
}

// note trims, clips (head and tail) and escapes a controller note.
func (l *locale) note(s string) string { return l.field(s, MaxNote) }

// field trims s, clips it to max bytes keeping a quarter from the head and
// the rest from the tail, and escapes it.
func (l *locale) field(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return EscapeUntrusted(s)
	}
	headLen := max / 4
	head := s[:runeStart(s, headLen)]
	tail, _ := clipTail(s, max-headLen)
	cut := len(s) - len(head) - len(tail)
	return EscapeUntrusted(head) + " " + fmt.Sprintf(l.cut, cut) + " " + EscapeUntrusted(tail)
}

// clipTail returns the last max bytes of s, starting on a rune boundary,
// and how many bytes it cut from the front.
func clipTail(s string, max int) (string, int) {
	if len(s) <= max {
		return s, 0
	}
	start := len(s) - max
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:], start
}

// clipOutput is clipTail for command output: when the cut lands inside a
// line not far from the start, the rest of that broken line is cut too, so
// the kept tail starts on a whole line.
func clipOutput(s string, max int) (string, int) {
	tail, cut := clipTail(s, max)
	if cut == 0 {
		return tail, 0
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < max/8 && i+1 < len(tail) {
		return tail[i+1:], cut + i + 1
	}
	return tail, cut
}

// runeStart returns the largest i <= n at which a rune of s starts.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
