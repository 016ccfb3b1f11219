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
	// MaxCommand is the most of a command (a feature's verify command, the
	// init.sh command) a prompt shows. A command that fits is shown
	// byte-exact.
	MaxCommand = 4000
	// MaxOptions is the most options of the agent's question an answer
	// section lists; the rest are counted.
	MaxOptions = 30
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
	Goal        string // the user's goal; rendered fenced, as data
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
	Answer               string   // the user's answer to the agent's question, as typed
	Question             string   // the question Answer answers, if known
	Options              []string // the options the question offered, if any
	Choice               int      // the option Answer picks, 1-based; 0 for a free-text answer
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
	Goal          string // the current goal; rendered fenced, as data
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
	// AuditRegression is set when the completion audit found a passing
	// feature's check failing on the final tree and grub set it back:
	// the controller's message.
	AuditRegression string
	// BlockedReexamine is the blocker the agent reported and grub has not
	// accepted yet.
	BlockedReexamine string
	ObjectiveUpdated *GoalChange
	Steer            []string // guidance queued by the user, each quoted once
	Answer           string   // the user's answer to the agent's question, as typed
	Question         string   // the question Answer answers, if known
	Options          []string // the options the question offered, if any
	Choice           int      // the option Answer picks, 1-based; 0 for a free-text answer
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
		TaskID:           NeutraliseTags(p.TaskID),
		Goal:             Fence(p.Goal),
		Paths:            newPathsView(p.Paths),
		MinFeatures:      p.MinFeatures,
		MaxFeatures:      p.MaxFeatures,
		Iteration:        p.Iteration,
		Failure:          l.note(p.Failure),
		Recovered:        p.RecoveredUnknownTurn,
		ObjectiveUpdated: goalChangeView(p.ObjectiveUpdated),
		Steer:            fenceAll(p.Steer),
		Answer:           l.answer(p.Answer, p.Question, p.Options, p.Choice),
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
		TaskID:             NeutraliseTags(p.TaskID),
		Goal:               Fence(p.Goal),
		Paths:              newPathsView(p.Paths),
		Iteration:          p.Iteration,
		MaxIterations:      p.MaxIterations,
		Passing:            p.Passing,
		Total:              p.Total,
		Failure:            l.note(p.Failure),
		Recovered:          p.RecoveredUnknownTurn,
		CompletionRejected: l.note(p.CompletionRejected),
		AuditRegression:    l.note(p.AuditRegression),
		BlockedReexamine:   l.note(p.BlockedReexamine),
		ObjectiveUpdated:   goalChangeView(p.ObjectiveUpdated),
		Steer:              fenceAll(p.Steer),
		Answer:             l.answer(p.Answer, p.Question, p.Options, p.Choice),
		TokensUsed:         p.TokensUsed,
		TokenBudget:        p.TokenBudget,
	}
	if p.TokenBudget > 0 {
		v.TokensPercent = p.TokensUsed * 100 / p.TokenBudget
	}
	if f := p.Next; f != nil {
		fv := &featureView{
			ID:          l.inline(f.ID, MaxField),
			Category:    l.inline(f.Category, MaxField),
			Description: l.inline(f.Description, MaxField),
		}
		if strings.TrimSpace(f.Verify) != "" {
			fv.Verify = l.inline(f.Verify, MaxCommand)
		}
		steps := f.Steps
		if len(steps) > MaxSteps {
			fv.MoreSteps = len(steps) - MaxSteps
			steps = steps[:MaxSteps]
		}
		for _, s := range steps {
			fv.Steps = append(fv.Steps, l.inline(s, MaxStep))
		}
		v.Next = fv
	}
	if c := p.LastInit; c != nil {
		tail, cut := clipOutput(strings.TrimRight(c.OutputTail, " \t\r\n"), MaxOutputTail)
		v.LastInit = &checkView{
			Command:  l.inline(c.Command, MaxCommand),
			ExitCode: c.ExitCode,
			Passed:   c.Passed,
			TimedOut: c.TimedOut,
			Cut:      cut,
		}
		if tail != "" {
			v.LastInit.OutputTail = Fence(tail)
		}
	}
	if d := p.LastDecision; d != nil {
		dv := &decisionView{
			Status:   l.text(d.Status, MaxField),
			Summary:  l.text(d.Summary, MaxField),
			NextStep: l.text(d.NextStep, MaxField),
			Blocker:  l.text(d.Blocker, MaxField),
			Question: l.text(d.Question, MaxField),
		}
		dv.Fence = fenceFor(dv.Status + dv.Summary + dv.NextStep + dv.Blocker + dv.Question)
		v.LastDecision = dv
	}
	return l.execute("execution", v)
}

// RenderWrapUp renders the wrap-up request a built-in agent sends when the
// budget is spent mid-turn. The reason is grub's own words, not fenced.
func RenderWrapUp(p WrapUp) (string, error) {
	l, err := lookup(p.Locale)
	if err != nil {
		return "", err
	}
	return l.execute("wrapup", wrapView{Reason: l.text(p.Reason, MaxField)})
}

func checkGoalChange(goal string, c *GoalChange) error {
	if c != nil && c.New != "" && c.New != goal {
		return fmt.Errorf("prompts: ObjectiveUpdated.New %q differs from Goal %q: pass the current goal in Goal", c.New, goal)
	}
	return nil
}

// The views below are what templates see: every string in them is already
// clipped, fenced (or quoted as code) and neutralised, so a template cannot
// forget to.

type pathsView struct {
	HarnessDir, FeatureList, ProgressLog, InitScript, Checklist, StateFile string
}

// newPathsView keeps the paths as they are (grub makes them), tags
// neutralised all the same.
func newPathsView(p Paths) pathsView {
	return pathsView{
		HarnessDir:  NeutraliseTags(p.HarnessDir),
		FeatureList: NeutraliseTags(p.FeatureList),
		ProgressLog: NeutraliseTags(p.ProgressLog),
		InitScript:  NeutraliseTags(p.InitScript),
		Checklist:   NeutraliseTags(p.Checklist),
		StateFile:   NeutraliseTags(p.StateFile),
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
	Answer                   *answerView
}

// answerView is the user's answer with the question it answers.
type answerView struct {
	Question    string   // fenced; "" when not known
	Options     []string // each as code
	MoreOptions int      // options left out of Options
	Choice      int      // the chosen option, 1-based; 0 for a free-text answer
	Typed       string   // what the user typed, as code (shown with a choice)
	Answer      string   // fenced: the chosen option's text, or the answer as typed
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

// decisionView is the last decision: its fields share one fence.
type decisionView struct {
	Fence                                        string
	Status, Summary, NextStep, Blocker, Question string
}

type execView struct {
	TaskID, Goal             string
	Paths                    pathsView
	Iteration, MaxIterations int
	Passing, Total           int
	Next                     *featureView
	LastInit                 *checkView
	LastDecision             *decisionView
	Failure                  string
	Recovered                bool
	CompletionRejected       string
	AuditRegression          string
	BlockedReexamine         string
	ObjectiveUpdated         *GoalChange
	Steer                    []string
	Answer                   *answerView
	TokensUsed, TokenBudget  int64
	TokensPercent            int64
}

type wrapView struct{ Reason string }

func goalChangeView(c *GoalChange) *GoalChange {
	if c == nil {
		return nil
	}
	return &GoalChange{Old: Fence(c.Old), New: Fence(c.New)}
}

// fenceAll fences each non-blank message and drops blank ones.
func fenceAll(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, Fence(m))
		}
	}
	return out
}

// answer builds the answer section's view; nil when there is no answer.
// choice is the 1-based option the answer picks, 0 for free text; a choice
// outside the options counts as free text.
func (l *locale) answer(answer, question string, options []string, choice int) *answerView {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return nil
	}
	v := &answerView{Answer: Fence(answer)}
	if strings.TrimSpace(question) != "" {
		v.Question = l.note(question)
	}
	shown := options
	if len(shown) > MaxOptions {
		v.MoreOptions = len(shown) - MaxOptions
		shown = shown[:MaxOptions]
	}
	for _, o := range shown {
		v.Options = append(v.Options, l.inline(o, MaxField))
	}
	if choice >= 1 && choice <= len(options) && strings.TrimSpace(options[choice-1]) != "" {
		v.Choice = choice
		v.Typed = Code(answer)
		v.Answer = l.note(options[choice-1])
	}
	return v
}

// note trims, clips (head and tail) and fences a controller note or other
// multi-line text; a blank one is "", so its section is left out.
func (l *locale) note(s string) string {
	head, tail, cut := clip(s, MaxNote)
	if head == "" {
		return ""
	}
	if cut == 0 {
		return Fence(head)
	}
	return Fence(head + " " + fmt.Sprintf(l.cut, cut) + " " + tail)
}

// text trims, clips (head and tail) and neutralises s, for a place whose
// fence the caller draws.
func (l *locale) text(s string, max int) string {
	head, tail, cut := clip(s, max)
	if cut == 0 {
		return NeutraliseTags(head)
	}
	return NeutraliseTags(head) + " " + fmt.Sprintf(l.cut, cut) + " " + NeutraliseTags(tail)
}

// inline trims s, clips it to max bytes and quotes it as code: whole when
// it fits, so a command or id is shown byte-exact; else its head and tail
// as two spans around the marker of what was cut.
func (l *locale) inline(s string, max int) string {
	head, tail, cut := clip(s, max)
	if cut == 0 {
		return Code(head)
	}
	return Code(head) + " " + fmt.Sprintf(l.cut, cut) + " " + Code(tail)
}

// clip trims s and, when it is longer than max bytes, keeps a quarter of
// max from the head and the rest from the tail, returning both and how
// many bytes were cut between them. A text that fits is all head.
func clip(s string, max int) (head, tail string, cut int) {
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s, "", 0
	}
	headLen := max / 4
	head = s[:runeStart(s, headLen)]
	tail, _ = clipTail(s, max-headLen)
	return head, tail, len(s) - len(head) - len(tail)
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
