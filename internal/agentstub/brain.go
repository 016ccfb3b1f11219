package agentstub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/grub-dev/grub/prompts"
)

// okMarker is what a scripted command prints when every part of it
// succeeded. The command computes it (okCommand), so a tool result that
// merely echoes the command line does not contain it.
const (
	okMarker  = "STUB-OK-42"
	okCommand = "echo STUB-OK-$((40+2))"
)

// Conversation is what the stub reads from a request: the user's text
// (grub's prompt, with whatever the CLI adds around it) and the results of
// the tool calls made so far, in order.
type Conversation struct {
	Prompt  string
	Results []ToolResult
}

// ToolResult is the result of one tool call as the CLI sent it back.
type ToolResult struct {
	Text    string
	IsError bool
}

// Action is what the model does next: run Command through the CLI's shell
// tool, or end the turn with Text.
type Action struct {
	Command string
	Text    string
}

// Brain decides the stub model's next action. It plays an honest agent on
// a task of Features features named feature-1 … feature-N, each verified by
// `test -f feature-N.done`:
//
//   - initializer turn: one command writes the feature list and init.sh
//     (and runs init.sh); then the turn ends with loop-state continue;
//   - execution turn on feature-K: one command creates feature-K.done and
//     writes the list with features 1…K passing, with evidence; then the
//     turn ends with continue, or complete after the last feature;
//   - a request that is not a grub turn (a CLI's side request) gets a short
//     text.
//
// A tool result without the success marker ends the turn with a message
// quoting it and no loop-state block, so that grub fails the turn and the
// test shows why.
type Brain struct {
	Features int
}

var (
	taskRe    = regexp.MustCompile(`grub task ([0-9a-f]+)`)
	goalRe    = regexp.MustCompile(`(?s)<goal>\n(.*?)\n</goal>`)
	nextRe    = regexp.MustCompile("(?m)^- id: `(feature-([0-9]+))`")
	initRe    = regexp.MustCompile(`This is the initializer turn`)
	harnessRe = regexp.MustCompile(`\.grub/[0-9a-f]+/`)
)

// Decide returns the next action for c.
func (b Brain) Decide(c Conversation) Action {
	m := taskRe.FindStringSubmatch(c.Prompt)
	if m == nil || !harnessRe.MatchString(c.Prompt) {
		return Action{Text: "OK."}
	}
	dir := ".grub/" + m[1]
	if n := len(c.Results); n > 0 {
		last := c.Results[n-1]
		if last.IsError || !strings.Contains(last.Text, okMarker) {
			return Action{Text: "The command failed, so I stop here:\n" + last.Text}
		}
	}
	if initRe.MatchString(c.Prompt) {
		if len(c.Results) == 0 {
			return Action{Command: b.initCommand(dir, goalOf(c.Prompt))}
		}
		return Action{Text: loopState("continue", "planned the features and wrote init.sh", "implement feature-1", "feature-1")}
	}
	nm := nextRe.FindStringSubmatch(c.Prompt)
	if nm == nil {
		return Action{Text: loopState("complete", "all features pass", "", "")}
	}
	id := nm[1]
	k, _ := strconv.Atoi(nm[2])
	if len(c.Results) == 0 {
		return Action{Command: b.flipCommand(dir, goalOf(c.Prompt), id, k)}
	}
	if k >= b.Features {
		return Action{Text: loopState("complete", "implemented "+id+"; every feature passes", "", id)}
	}
	return Action{Text: loopState("continue", "implemented "+id, fmt.Sprintf("implement feature-%d", k+1), id)}
}

// goalOf is the goal as the user wrote it: the prompt's goal block,
// fenced as grub shows text from outside (a line of backticks, the text,
// the same line), with the one change grub makes undone
// (prompts.RestoreTags).
func goalOf(prompt string) string {
	m := goalRe.FindStringSubmatch(prompt)
	if m == nil {
		return ""
	}
	body := m[1]
	lines := strings.Split(body, "\n")
	if n := len(lines); n >= 3 && len(lines[0]) >= 3 && strings.Trim(lines[0], "`") == "" && lines[n-1] == lines[0] {
		body = strings.Join(lines[1:n-1], "\n")
	}
	return prompts.RestoreTags(body)
}

func loopState(status, summary, next, feature string) string {
	d := map[string]string{"status": status, "summary": summary}
	if next != "" {
		d["nextStep"] = next
	}
	if feature != "" {
		d["feature"] = feature
	}
	data, _ := json.Marshal(d)
	return "Done with this turn.\n<loop-state>" + string(data) + "</loop-state>"
}

// featureList is the list with the first passed features passing.
func (b Brain) featureList(goal string, passed int) string {
	type feature struct {
		ID          string   `json:"id"`
		Category    string   `json:"category"`
		Description string   `json:"description"`
		Steps       []string `json:"steps"`
		Verify      string   `json:"verify"`
		Passes      bool     `json:"passes"`
		Evidence    *string  `json:"evidence"`
	}
	l := struct {
		Version  int       `json:"version"`
		Goal     string    `json:"goal"`
		Features []feature `json:"features"`
	}{Version: 1, Goal: goal}
	for i := 1; i <= b.Features; i++ {
		id := fmt.Sprintf("feature-%d", i)
		f := feature{
			ID: id, Category: "functional",
			Description: fmt.Sprintf("The workspace has the marker file of feature %d", i),
			Steps:       []string{fmt.Sprintf("create %s.done in the workspace root", id)},
			Verify:      fmt.Sprintf("test -f %s.done", id),
		}
		if i <= passed {
			ev := fmt.Sprintf("created %s.done; test -f %s.done exits 0", id, id)
			f.Passes, f.Evidence = true, &ev
		}
		l.Features = append(l.Features, f)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the goal as the user wrote it, & and < included
	enc.SetIndent("", "  ")
	_ = enc.Encode(l)
	return strings.TrimSuffix(buf.String(), "\n")
}

// heredoc is a shell command writing content to path.
func heredoc(path, content string) string {
	return "cat > " + path + " <<'GRUB_STUB_EOF'\n" + content + "\nGRUB_STUB_EOF\n"
}

const initScript = `#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/../.."
echo smoke check ok`

func (b Brain) initCommand(dir, goal string) string {
	return heredoc(dir+"/feature-list.json", b.featureList(goal, 0)) +
		heredoc(dir+"/init.sh", initScript) +
		"chmod +x " + dir + "/init.sh && " + dir + "/init.sh && " + okCommand
}

func (b Brain) flipCommand(dir, goal, id string, k int) string {
	return "echo done > " + id + ".done\n" +
		heredoc(dir+"/feature-list.json", b.featureList(goal, k)) +
		dir + "/init.sh && test -f " + id + ".done && " + okCommand
}
