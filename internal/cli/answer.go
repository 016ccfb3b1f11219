package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/templates"
)

// AnswerOptions are the inputs of grub answer.
type AnswerOptions struct {
	IO     *IOStreams
	Store  func() (*harness.Store, error)
	Now    func() time.Time
	Getenv func(string) string
	Ctx    context.Context

	ID     string
	Answer string
	JSON   bool
	// Events is --json's stream of the run's events (nil without --json).
	Events     *eventStream
	Heartbeat  time.Duration
	NoProgress bool // --no-progress
	Landlock   func() (int, bool)
	Reap       bool
	Detached   *os.File // Factory.Detached (detach.go)
}

// NewCmdAnswer builds grub answer. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdAnswer(f *Factory, runF func(*AnswerOptions) error) *cobra.Command {
	opts := &AnswerOptions{IO: f.IO, Store: f.Store, Now: f.Now, Getenv: f.Getenv, Landlock: f.Landlock, Reap: f.Reap, Detached: f.Detached}
	var rf runFlags
	cmd := &cobra.Command{
		Use:   `answer [<id>] "text"`,
		Short: "Answer the agent's question and resume the task",
		Long: `Answer the question the agent asked, and continue the task in the
foreground, exactly like grub resume. Without <id>, the most recently
updated task.

An agent that needs a decision only you can make ends its turn blocked with
a question; grub stops the task at once (exit 3) and grub status shows the
question and any options. grub answer prints the question it answers,
records your answer in progress-log.md, and resumes the task: the next
turn's prompt carries the answer, quoted as your own words, exactly once,
with the question and its options. An answer that picks an option by its
number ("2", "option 2") carries that option's text; any other answer is
quoted as typed.
Resuming a blocked task clears its failure, blocked and no-progress
counters.

Only a blocked task with an open question takes an answer. To give
guidance to a task that asked nothing, use grub steer; to continue a
stopped task, grub resume.

The exit code is that of the task's status when it stops again, as for
grub resume.`,
		Example: `  grub status                    # shows the question and its options
  grub answer "use SQLite; the service runs on one machine"
  grub answer 0a1b2c3d "postgres"
  grub answer "option 2" --json  # the run's events on stdout, one JSON object a line`,
		Args:              messageArgs("answer", "answer"),
		ValidArgsFunction: completeTaskIDs(f),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			opts.Events = newEventStream(opts.IO, rf.JSON, opts.Now)
			defer func() { err = opts.Events.stop(err) }()
			opts.ID, opts.Answer = splitMessageArgs(args)
			opts.Ctx = cmd.Context()
			opts.JSON, opts.Heartbeat, opts.NoProgress = rf.JSON, rf.Heartbeat, rf.NoProgress
			if opts.Heartbeat <= 0 {
				return usageErrorf("--heartbeat %s: must be positive, e.g. 30s", opts.Heartbeat)
			}
			if runF != nil {
				return runF(opts)
			}
			if rf.detaching(f) {
				return runDetached(f, "")
			}
			return answerRun(opts)
		},
	}
	rf.register(cmd)
	return cmd
}

// openQuestion returns the question a task waits on, or an error (exit 2)
// that says why it takes no answer and what to do instead.
func openQuestion(st *harness.State) (*harness.Decision, error) {
	d := st.LastDecision
	switch {
	case st.Status == harness.StatusComplete:
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf("task %s is complete; it has no question to answer", st.ID)}
	case st.Status != harness.StatusBlocked || d == nil || strings.TrimSpace(d.Question) == "":
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf(
			"task %s has no open question (status %s); use grub steer to give guidance or grub resume to continue", st.ID, st.Status)}
	}
	return d, nil
}

func answerRun(opts *AnswerOptions) error {
	store, st, err := loadTask(opts.Store, opts.ID)
	if err != nil {
		return err
	}
	id := st.ID
	opts.Events.forTask(store, id)
	if err := checkTaskTrust(store, st); err != nil {
		return err
	}
	d, err := openQuestion(st)
	if err != nil {
		return err
	}
	w := opts.IO.ErrOut
	fmt.Fprintf(w, "grub: task %s asked: %s\n", id, indentLines(d.Question, "  "))
	for i, o := range d.Options {
		fmt.Fprintf(w, "  %d. %s\n", i+1, oneLine(o, 0))
	}
	fmt.Fprintf(w, "grub: your answer: %s\n", indentLines(answerText(opts.Answer, d.Options), "  "))

	st, err = recordAnswer(store, id, d.Question, opts.Answer, opts.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "grub: resuming task %s at iteration %d (%s)\n", id, st.CurrentIteration, st.Status)
	return runTask(ctxOr(opts.Ctx), runOptions{IO: opts.IO, Store: store, ID: id, Now: opts.Now,
		Getenv: opts.Getenv, Events: opts.Events, Heartbeat: opts.Heartbeat, NoProgress: opts.NoProgress, Landlock: opts.Landlock, Reap: opts.Reap, Detached: opts.Detached})
}

// recordAnswer stores answer as the next prompt's pending answer and logs
// it, under the task's lock, on the state as it is then. A task a
// controller runs is a *harness.LockedError (exit 75); a task whose
// question was answered or replaced meanwhile is refused like any other.
func recordAnswer(store *harness.Store, id, question, answer string, now time.Time) (st *harness.State, err error) {
	lock, err := store.Lock(id)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil && err == nil {
			err = fmt.Errorf("releasing the lock of task %s: %w", id, rerr)
		}
	}()
	st, err = store.LoadState(id)
	if err != nil {
		return nil, err
	}
	d, err := openQuestion(st)
	if err != nil {
		return nil, err
	}
	if d.Question != question {
		return nil, &ExitError{Code: ExitUsage, Err: errors.New(
			"the agent asked another question while you answered; read it with grub status " + id + " and answer again")}
	}
	if st.Pending.Answer != "" && st.Pending.AnswerTo == question {
		return nil, &ExitError{Code: ExitUsage, Err: fmt.Errorf(
			"the question of task %s is already answered (%q); the next turn carries that answer: run grub resume %s", id, st.Pending.Answer, id)}
	}
	st.Pending.Answer, st.Pending.AnswerTo = answer, question
	st.Pending.AnswerOptions = append([]string(nil), d.Options...)
	st.Pending.AnswerChoice = chosenOption(answer, d.Options)
	st.UpdatedAt = now.UTC()
	if err := store.SaveState(st); err != nil {
		return nil, err
	}
	if err := store.AppendEntry(id, templates.Entry{
		Iteration: st.CurrentIteration,
		Phase:     string(st.Phase),
		Decision:  loopstate.Answer,
		Summary:   "the user answered the agent's question",
		Note:      "Question: " + indentLines(question, "  ") + "\n\nAnswer: " + indentLines(answerText(answer, d.Options), "  "),
		At:        now.UTC(),
	}); err != nil {
		return nil, err
	}
	return st, nil
}

// optionRE is an answer that picks an option by its number: "2", "#2",
// "2.", "option 2".
var optionRE = regexp.MustCompile(`^(?i)(?:option\s*)?#?([0-9]+)\.?$`)

// chosenOption returns the option (1-based) answer picks by its number, or
// 0 when answer is free text (any other text, a number out of range).
func chosenOption(answer string, options []string) int {
	m := optionRE.FindStringSubmatch(strings.TrimSpace(answer))
	if m == nil {
		return 0
	}
	if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= len(options) && strings.TrimSpace(options[n-1]) != "" {
		return n
	}
	return 0
}

// answerText is the answer as the user typed it, followed by the option it
// picks when it picks one: "2 (option 2: Google)".
func answerText(answer string, options []string) string {
	answer = strings.TrimSpace(answer)
	if n := chosenOption(answer, options); n > 0 {
		return fmt.Sprintf("%s (option %d: %s)", answer, n, strings.TrimSpace(options[n-1]))
	}
	return answer
}

// indentLines indents every line of s after the first with prefix, so a
// multi-line text stays readable under its label.
func indentLines(s, prefix string) string {
	return strings.ReplaceAll(termsafe.Escape(strings.TrimSpace(s)), "\n", "\n"+prefix)
}
