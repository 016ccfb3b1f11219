package fakeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/featurelist"
)

// Usage of the fake agent:
//
//	fakeagent [-features N] [-plan "2:edit-description,3:two-flips"] [-default honest] [-usage IN,CACHED,OUT]
//
// The initializer turn always writes an honest plan: N features, each with
// `verify: test -f <id>.done`, and an init.sh whose smoke check passes while
// the workspace has no file named BROKEN. Execution turns follow the plan's
// behaviour for that iteration, or the default behaviour. Behaviours:
//
//	honest            create <id>.done for the first pending feature, flip it with evidence,
//	                  report complete after the last one
//	complete-early    claim complete without doing anything
//	edit-description  change the first feature's description, and do honest work
//	add-feature       append a feature, and do honest work
//	two-flips         flip the first two pending features (creating both files)
//	flip-no-evidence  flip the first pending feature with empty evidence
//	verify-fail       flip the first pending feature without creating its file
//	break-earlier     do honest work, and delete the file of the first passing feature
//	                  (its verify command fails from then on; the list is not touched)
//	break-earlier     do honest work, and delete the .done file of the first feature that
//	                  passes already (a silent regression; the list is not touched)
//	no-loop-state     do honest work but end without a <loop-state> block
//	bad-loop-state    end with a malformed block
//	write-state       do honest work and overwrite state.json
//	blocked           report blocked on a missing credential
//	question          report blocked with a question for the user
//	idle              change nothing and report continue
//	touch             rewrite touched.txt with the same content (a new mtime, no change)
//	fail              exit 3 without a message
//	hang              write hang.pid and sleep until killed (in-process: wait until the turn is
//	                  cancelled or times out)
//	slow              sleep (-sleep, default 1s), then honest work
//	bad-plan          (initializer) write a list whose features pass already
//	no-init           (initializer) plan, but delete init.sh
//	list-dir          replace feature-list.json with a folder
//	scribble          overwrite state.json with garbage, sleep (-sleep), then do honest work
//
// the cheats on grub's record and on protected files (record.go), each
// followed by honest work, and those that rewrite git's history
// (history.go).
func Main() int { return MainArgs(os.Args[1:]) }

// Script is what the fake agent plays, as its flags set it.
type Script struct {
	Features int            // features the initializer plans (-features)
	Plan     map[int]string // behaviour by iteration (-plan)
	Default  string         // behaviour of iterations the plan does not name (-default)
	Usage    agent.Usage    // tokens reported per turn (-usage IN,CACHED,OUT)
	Sleep    time.Duration  // how long slow and scribble wait (-sleep)
	Format   string         // how the program prints its final message (-format); the in-process Agent ignores it
}

// ParseArgs parses the fake agent's flags (without the program name).
func ParseArgs(args []string) (Script, error) {
	fs := flag.NewFlagSet("fakeagent", flag.ContinueOnError)
	features := fs.Int("features", 3, "features the initializer plans")
	plan := fs.String("plan", "", "iteration:behaviour pairs, comma separated")
	def := fs.String("default", "honest", "behaviour of iterations the plan does not name")
	usage := fs.String("usage", "", "tokens to report per turn as IN,CACHED,OUT")
	slow := fs.Duration("sleep", time.Second, "how long the slow behaviour sleeps")
	format := fs.String("format", "text", "how to print the final message: text (command backend), claude (Claude Code's -p --output-format stream-json --verbose messages) or codex (codex exec --json events)")
	if err := fs.Parse(args); err != nil {
		return Script{}, err
	}
	s := Script{Features: *features, Plan: map[int]string{}, Default: *def, Sleep: *slow, Format: *format}
	for _, p := range strings.Split(*plan, ",") {
		if it, b, ok := strings.Cut(p, ":"); ok {
			if n, err := strconv.Atoi(it); err == nil {
				s.Plan[n] = b
			}
		}
	}
	if *usage != "" {
		fmt.Sscanf(*usage, "%d,%d,%d", &s.Usage.InputTokens, &s.Usage.CachedInputTokens, &s.Usage.OutputTokens)
	}
	return s, nil
}

// behaviour is what the script plays in the given iteration.
func (s Script) behaviour(iteration int) string {
	if b, ok := s.Plan[iteration]; ok {
		return b
	}
	return s.Default
}

// MainArgs is Main with the arguments given (without the program name).
func MainArgs(args []string) int {
	s, err := ParseArgs(args)
	if err != nil {
		return 2
	}
	a := &fake{
		workspace: mustGetwd(),
		harness:   os.Getenv("GRUB_HARNESS_DIR"),
		phase:     os.Getenv("GRUB_PHASE"),
		slow:      s.Sleep,
		out:       new(bytes.Buffer),
		stderr:    os.Stderr,
		sleep: func(d time.Duration) error {
			time.Sleep(d)
			return nil
		},
	}
	a.hang = func() error {
		// Renamed into place, so that a script that waits for the file
		// never reads it empty.
		pidFile := filepath.Join(a.workspace, "hang.pid")
		if err := os.WriteFile(pidFile+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return err
		}
		if err := os.Rename(pidFile+".tmp", pidFile); err != nil {
			return err
		}
		time.Sleep(time.Hour)
		return nil
	}
	a.iteration, _ = strconv.Atoi(os.Getenv("GRUB_ITERATION"))
	prompt, _ := io.ReadAll(os.Stdin)
	if a.harness == "" || len(prompt) == 0 {
		fmt.Fprintln(os.Stderr, "fakeagent: run me through grub's command backend (GRUB_HARNESS_DIR and a prompt on stdin are required)")
		return 2
	}
	if u := s.Usage; u != (agent.Usage{}) {
		fmt.Fprintf(os.Stderr, "GRUB_USAGE {\"input\":%d,\"cached\":%d,\"output\":%d}\n", u.InputTokens, u.CachedInputTokens, u.OutputTokens)
	}
	code := a.run(s.behaviour(a.iteration), s.Features)
	return emit(s.Format, a.out.String(), code)
}

// Agent is the fake agent as an in-process agent.Agent: it plays its
// Script on the turn's workspace and harness folder and returns the final
// message, with no program started. Its waits (hang, slow, scribble) end
// early when ctx is cancelled or the turn's Timeout passes; then RunTurn
// returns an error wrapping ctx.Err() or agent.ErrTimeout, as the real
// backends do. A behaviour that makes the program exit non-zero is an
// error naming the exit code.
type Agent struct {
	Script
	// After waits as time.After does (nil: time.After); tests give a fake
	// clock's, so that timeouts and sleeps pass when the test says.
	After func(time.Duration) <-chan time.Time
	// OnWait, if set, is called when the turn starts to wait, after the
	// timers are set: the moment a test may cancel, pause or move the
	// clock on.
	OnWait func(agent.Turn)
}

// New is an in-process fake agent playing the script args (the program's
// flags) set.
func New(args ...string) (*Agent, error) {
	s, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return &Agent{Script: s}, nil
}

// RunTurn plays the script for one turn.
func (g *Agent) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	if t.HarnessDir == "" || t.Prompt == "" {
		return agent.Result{}, errors.New("fakeagent: a turn needs a harness folder and a prompt")
	}
	after := g.After
	if after == nil {
		after = time.After
	}
	var deadline <-chan time.Time
	if t.Timeout > 0 {
		deadline = after(t.Timeout)
	}
	wait := func(d time.Duration, forever bool) error {
		var done <-chan time.Time
		if !forever {
			done = after(d)
		}
		if g.OnWait != nil {
			g.OnWait(t)
		}
		select {
		case <-done:
			return nil
		case <-deadline:
			return fmt.Errorf("fakeagent: %w after %s", agent.ErrTimeout, t.Timeout)
		case <-ctx.Done():
			return fmt.Errorf("fakeagent: %w", ctx.Err())
		}
	}
	var stderr bytes.Buffer
	a := &fake{
		workspace: t.Workspace, harness: t.HarnessDir, phase: t.Phase, iteration: t.Iteration,
		slow: g.Sleep, out: new(bytes.Buffer), stderr: &stderr,
		sleep: func(d time.Duration) error { return wait(d, false) },
		hang:  func() error { return wait(0, true) },
	}
	code := a.run(g.behaviour(t.Iteration), g.Features)
	usage := g.Usage
	usage.Requests = 1
	res := agent.Result{FinalMessage: a.out.String(), Usage: usage}
	switch {
	case a.ended != nil:
		return res, a.ended
	case code != 0:
		return res, fmt.Errorf("fakeagent exited with code %d; %s", code, strings.TrimSpace(stderr.String()))
	}
	return res, nil
}

func (a *fake) run(behaviour string, features int) int {
	if a.phase == "initializer" && behaviour == "question" {
		return a.ask() // before planning
	}
	if a.phase == "initializer" {
		code := a.initialize(features, behaviour == "bad-plan")
		if behaviour == "no-init" {
			if err := os.Remove(filepath.Join(a.harness, "init.sh")); err != nil {
				return a.fail(err)
			}
		}
		return code
	}
	return a.execute(behaviour)
}

// emit prints the final message as the backend being imitated would.
func emit(format, message string, code int) int {
	switch format {
	case "claude":
		// claude -p --output-format stream-json --verbose: the session's
		// messages one a line, the result last.
		usage := map[string]int{"input_tokens": 10, "cache_creation_input_tokens": 90, "cache_read_input_tokens": 400, "output_tokens": 50}
		lines := []map[string]any{
			{"type": "system", "subtype": "init", "session_id": "fake-session", "model": "fake-model", "tools": []string{"Bash"}},
			{"type": "assistant", "session_id": "fake-session", "message": map[string]any{"id": "msg_fake", "type": "message", "role": "assistant",
				"model": "fake-model", "content": []map[string]any{{"type": "text", "text": message}}, "usage": usage}},
		}
		subtype := "success"
		if code != 0 {
			subtype = "error_during_execution"
		}
		lines = append(lines, map[string]any{"type": "result", "subtype": subtype, "is_error": code != 0,
			"num_turns": 1, "result": message, "session_id": "fake-session", "total_cost_usd": 0.0125, "usage": usage,
			"modelUsage": map[string]any{"fake-model": map[string]any{"inputTokens": 10, "cacheCreationInputTokens": 90,
				"cacheReadInputTokens": 400, "outputTokens": 50, "costUSD": 0.0125}}})
		for _, l := range lines {
			data, _ := json.Marshal(l)
			fmt.Println(string(data))
		}
	case "codex":
		msg, _ := json.Marshal(message)
		fmt.Println(`{"type":"thread.started","thread_id":"fake-thread"}`)
		fmt.Println(`{"type":"turn.started"}`)
		fmt.Printf(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":%s}}`+"\n", msg)
		fmt.Println(`{"type":"turn.completed","usage":{"input_tokens":500,"cached_input_tokens":400,"output_tokens":50}}`)
	default:
		fmt.Print(message)
	}
	return code
}

// fake is one turn of the fake agent, on explicit paths.
type fake struct {
	workspace, harness, phase string
	iteration                 int
	slow                      time.Duration // how long slow and scribble wait
	out                       *bytes.Buffer // the final message
	stderr                    io.Writer
	sleep                     func(time.Duration) error // waits; an error ends the turn
	hang                      func() error              // waits until the turn is ended from outside
	ended                     error                     // why a wait ended the turn
}

func (a *fake) listPath() string { return filepath.Join(a.harness, "feature-list.json") }

func (a *fake) initialize(n int, bad bool) int {
	goal := goalFromState(a.harness)
	l := &featurelist.List{Version: 1, Goal: goal}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("feature-%d", i)
		l.Features = append(l.Features, featurelist.Feature{
			ID: id, Category: "functional",
			Description: fmt.Sprintf("The workspace has a marker file proving feature %d works", i),
			Steps:       []string{fmt.Sprintf("create %s.done in the workspace root", id)},
			Verify:      fmt.Sprintf("test -f %s.done", id),
			Passes:      bad,
		})
	}
	if err := a.writeList(l); err != nil {
		return a.fail(err)
	}
	script := "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")/../..\"\necho smoke check\ntest ! -e BROKEN\n"
	if err := os.WriteFile(filepath.Join(a.harness, "init.sh"), []byte(script), 0o755); err != nil {
		return a.fail(err)
	}
	a.say("continue", "planned the features", "implement feature-1", "")
	return 0
}

func (a *fake) execute(behaviour string) int {
	l, err := a.readList()
	if err != nil {
		return a.fail(err)
	}
	if code, done := a.beforeWork(behaviour); done {
		return code
	}
	if err := a.cheat(behaviour); err != nil {
		return a.fail(err)
	}
	if code, done := a.rewriteBefore(behaviour); done {
		return code
	}
	next := l.FirstPending()
	if next == nil {
		a.say("complete", "all features pass", "", "")
		return 0
	}
	if err := a.work(l, next, behaviour); err != nil {
		return a.fail(err)
	}
	if err := a.rewriteAfter(behaviour, next.ID); err != nil {
		return a.fail(err)
	}
	a.report(l, next, behaviour)
	return 0
}

// beforeWork plays the behaviours that end the turn without working on a
// feature (done is then set, with the exit code), and the waits and
// scribbles that come before the work.
func (a *fake) beforeWork(behaviour string) (code int, done bool) {
	switch behaviour {
	case "complete-early":
		fmt.Fprintln(a.out, `<loop-state>{"status":"complete","summary":"everything is done, trust me"}</loop-state>`)
		return 0, true
	case "idle":
		a.say("continue", "looked around", "look around more", "")
		return 0, true
	case "touch":
		if err := os.WriteFile(filepath.Join(a.workspace, "touched.txt"), []byte("same\n"), 0o644); err != nil {
			return a.fail(err), true
		}
		a.say("continue", "rewrote touched.txt", "rewrite it again", "")
		return 0, true
	case "fail":
		fmt.Fprintln(a.stderr, "fakeagent: crashed on purpose")
		return 3, true
	case "blocked":
		fmt.Fprintln(a.out, `<loop-state>{"status":"blocked","summary":"cannot reach the service","blocker":"the API credential is missing"}</loop-state>`)
		return 0, true
	case "question":
		return a.ask(), true
	case "hang":
		if err := a.hang(); err != nil {
			return a.end(err), true
		}
		return 0, true
	case "slow":
		if err := a.sleep(a.slow); err != nil {
			return a.end(err), true
		}
	case "scribble":
		if err := os.WriteFile(filepath.Join(a.harness, "state.json"), []byte("{not json"), 0o644); err != nil {
			return a.fail(err), true
		}
		if err := a.sleep(a.slow); err != nil {
			return a.end(err), true
		}
	case "list-dir":
		if err := os.Remove(a.listPath()); err != nil {
			return a.fail(err), true
		}
		if err := os.Mkdir(a.listPath(), 0o755); err != nil {
			return a.fail(err), true
		}
		a.say("continue", "tidied the harness", "carry on", "")
		return 0, true
	}
	return 0, false
}

// work implements next (the first pending feature of l) and flips it, the
// honest way or with the cheat behaviour names, and writes the list back.
func (a *fake) work(l *featurelist.List, next *featurelist.Feature, behaviour string) error {
	evidence := fmt.Sprintf("created %s.done and ran its verify command", next.ID)
	switch behaviour {
	case "edit-description":
		l.Features[0].Description += " (made easier)"
	case "add-feature":
		l.Features = append(l.Features, featurelist.Feature{ID: "bonus", Category: "functional", Description: "an extra", Steps: []string{"x"}})
	case "flip-no-evidence":
		evidence = ""
	}
	if behaviour == "break-earlier" {
		if done := firstPassing(l); done != "" {
			if err := os.Remove(filepath.Join(a.workspace, done+".done")); err != nil {
				return err
			}
		}
	}
	if behaviour != "verify-fail" {
		if err := os.WriteFile(filepath.Join(a.workspace, next.ID+".done"), []byte("done\n"), 0o644); err != nil {
			return err
		}
	}
	if behaviour == "break-earlier" {
		for _, f := range l.Features {
			if f.Passes && f.ID != next.ID {
				if err := os.Remove(filepath.Join(a.workspace, f.ID+".done")); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
				break
			}
		}
	}
	next.Passes, next.Evidence = true, &evidence
	if behaviour == "two-flips" {
		if second := l.FirstPending(); second != nil {
			_ = os.WriteFile(filepath.Join(a.workspace, second.ID+".done"), []byte("done\n"), 0o644)
			second.Passes, second.Evidence = true, &evidence
		}
	}
	if err := a.writeList(l); err != nil {
		return err
	}
	if behaviour == "write-state" {
		return os.WriteFile(filepath.Join(a.harness, "state.json"), []byte(`{"status":"complete"}`), 0o644)
	}
	return nil
}

// report ends a turn that worked on next with the final message the
// behaviour calls for.
func (a *fake) report(l *featurelist.List, next *featurelist.Feature, behaviour string) {
	switch behaviour {
	case "no-loop-state":
		fmt.Fprintln(a.out, "I implemented "+next.ID+" and I am sure it works.")
		return
	case "bad-loop-state":
		fmt.Fprintln(a.out, `<loop-state>{"status":"continue","summary":</loop-state>`)
		return
	}
	status, nextStep := "continue", "implement the next pending feature"
	if l.FirstPending() == nil {
		status, nextStep = "complete", ""
	}
	a.say(status, "implemented "+next.ID, nextStep, next.ID)
}

// firstPassing is the id of the first feature of l that passes, or "".
func firstPassing(l *featurelist.List) string {
	for _, f := range l.Features {
		if f.Passes {
			return f.ID
		}
	}
	return ""
}

func (a *fake) readList() (*featurelist.List, error) {
	data, err := os.ReadFile(a.listPath())
	if err != nil {
		return nil, err
	}
	return featurelist.Parse(a.listPath(), data)
}

func (a *fake) writeList(l *featurelist.List) error {
	data, err := featurelist.Marshal(l)
	if err != nil {
		return err
	}
	return os.WriteFile(a.listPath(), data, 0o644)
}

// goalFromState reads the goal from state.json, as an agent could.
func goalFromState(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return ""
	}
	var st struct {
		Goal string `json:"goal"`
	}
	_ = json.Unmarshal(data, &st)
	return st.Goal
}

// ask reports blocked with a question for the user.
func (a *fake) ask() int {
	fmt.Fprintln(a.out, `<loop-state>{"status":"blocked","summary":"need a decision","blocker":"two database choices","question":"Postgres or SQLite?","options":["postgres","sqlite"]}</loop-state>`)
	return 0
}

func (a *fake) say(status, summary, nextStep, feature string) {
	fmt.Fprintf(a.out, "Work report.\n<loop-state>{\"status\":%q,\"summary\":%q", status, summary)
	if nextStep != "" {
		fmt.Fprintf(a.out, ",\"nextStep\":%q", nextStep)
	}
	if feature != "" {
		fmt.Fprintf(a.out, ",\"feature\":%q", feature)
	}
	fmt.Fprintln(a.out, "}</loop-state>")
}

func (a *fake) fail(err error) int {
	fmt.Fprintln(a.stderr, "fakeagent:", err)
	return 1
}

// end ends the turn early because a wait was cut short.
func (a *fake) end(err error) int {
	a.ended = err
	return a.fail(err)
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}
