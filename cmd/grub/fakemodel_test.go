package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// cmdFakeOpenAI starts a FAKE OpenAI-compatible server (llmtest) for the
// rest of the script and points $OPENAI_BASE_URL at it. Its replies come
// from scriptedModel: a deterministic "model" that plans two features and
// builds them with grub's real tools, so `grub start --agent openai` runs
// end to end over real HTTP.
//
// With the argument quota, every request is refused with insufficient_quota;
// with nousage, the replies carry no usage; with probe, every shell
// command of the model first runs `sh "$PROBE" shell` (see sandbox.txtar).
//
//	fakeopenai [quota|nousage|probe]
func cmdFakeOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	mode := ""
	if len(args) == 1 {
		mode = args[0]
	}
	if neg || len(args) > 1 || mode != "" && mode != "quota" && mode != "nousage" && mode != "gitplant" && mode != "gitredirect" && mode != "controlplant" && mode != "configplant" && mode != "probe" {
		ts.Fatalf("usage: fakeopenai [quota|nousage|gitplant|gitredirect|controlplant|configplant|probe]")
	}
	srv := llmtest.NewServer()
	switch mode {
	case "quota":
		srv.SetFallback(func(llmtest.Request) llmtest.Step { return llmtest.Step{Fault: llmtest.Quota} })
	case "nousage":
		srv.SetFallback(func(r llmtest.Request) llmtest.Step {
			step := scriptedModel(r)
			step.Usage = nil
			return step
		})
	case "gitplant":
		srv.SetFallback(gitPlantModel)
	case "gitredirect":
		srv.SetFallback(gitRedirectModel)
	case "controlplant":
		srv.SetFallback(controlPlantModel())
	case "configplant":
		srv.SetFallback(configPlantModel)
	case "probe":
		srv.SetFallback(scripted(`sh "$PROBE" shell && `))
	default:
		srv.SetFallback(scriptedModel)
	}
	ts.Setenv("OPENAI_BASE_URL", srv.URL())
	ts.Setenv("OPENAI_API_KEY", "")
	ts.Defer(func() {
		srv.Close()
		if err := srv.Verify(); err != nil {
			ts.Fatalf("fake model server: %v", err)
		}
		// Every request of the task carried the same system prompt and
		// tools, byte for byte, so a provider's prompt cache would hit.
		reqs := srv.Requests()
		for _, r := range reqs[min(1, len(reqs)):] {
			if string(r.Messages[0]) != string(reqs[0].Messages[0]) || string(r.Tools) != string(reqs[0].Tools) {
				ts.Fatalf("request %d changed the system prompt or the tools", r.N)
			}
		}
	})
}

var harnessDirPattern = regexp.MustCompile(`\.grub/[0-9a-f]{8}`)

// fakeFeatures are the features the scripted model plans, in its own
// formatting, which it later edits with edit_file.
var fakeFeatures = []string{"alpha", "beta"}

// scriptedModel is the scripted model; scripted(prefix) is the same with
// prefix put before each of its shell commands.
var scriptedModel = scripted("")

func scripted(shellPrefix string) func(llmtest.Request) llmtest.Step {
	return func(r llmtest.Request) llmtest.Step { return scriptedStep(r, shellPrefix) }
}

func scriptedStep(r llmtest.Request, shellPrefix string) llmtest.Step {
	usage := &llmtest.Usage{Prompt: 1000, Cached: 400, Completion: 50}
	var prompt string
	assistantTurns := 0
	for _, m := range r.Decoded {
		switch m.Role {
		case "user":
			if prompt == "" {
				prompt = m.Content
			}
		case "assistant":
			assistantTurns++
		}
	}
	dir := harnessDirPattern.FindString(prompt)
	if dir == "" {
		return llmtest.Text("I cannot find the harness folder in the prompt.", usage)
	}
	list := dir + "/feature-list.json"
	if strings.Contains(prompt, "Do not implement any feature yet") {
		switch assistantTurns {
		case 0:
			return llmtest.Calls(usage,
				llmtest.Call("write_file", map[string]string{"path": list, "content": plannedList(promptGoal(prompt))}),
				llmtest.Call("write_file", map[string]string{"path": dir + "/init.sh", "content": "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")/../..\"\ntest -d .\n"}))
		default:
			return llmtest.Text(`Planned.
<loop-state>{"status":"continue","summary":"planned two features","nextStep":"build alpha","feature":"alpha"}</loop-state>`, usage)
		}
	}
	next := ""
	for _, id := range fakeFeatures {
		if strings.Contains(prompt, "test -f "+id+".done") {
			next = id
			break
		}
	}
	if next == "" {
		return llmtest.Text(`<loop-state>{"status":"complete","summary":"nothing left to build"}</loop-state>`, usage)
	}
	switch assistantTurns {
	case 0:
		return llmtest.Calls(usage,
			llmtest.Call("shell", map[string]string{"command": shellPrefix + "touch " + next + ".done && ls"}),
			llmtest.Call("read_file", map[string]any{"path": list}))
	case 1:
		return llmtest.Calls(usage, llmtest.Call("edit_file", map[string]any{
			"path":       list,
			"old_string": fmt.Sprintf("\"verify\": \"test -f %s.done\",\n      \"passes\": false,\n      \"evidence\": null", next),
			"new_string": fmt.Sprintf("\"verify\": \"test -f %s.done\",\n      \"passes\": true,\n      \"evidence\": \"touch %s.done; ls shows it\"", next, next),
		}))
	default:
		return llmtest.Text(fmt.Sprintf(`Built %s.
<loop-state>{"status":"continue","summary":"built %s","nextStep":"build the next feature","feature":"%s"}</loop-state>`, next, next, next), usage)
	}
}

// promptGoal reads the goal back out of the <goal> block of a prompt.
func promptGoal(prompt string) string {
	_, rest, _ := strings.Cut(prompt, "<goal>")
	goal, _, _ := strings.Cut(rest, "</goal>")
	goal = strings.TrimSpace(goal)
	// The goal is fenced: drop the first and the last line (the fences).
	if strings.HasPrefix(goal, "```") {
		_, goal, _ = strings.Cut(goal, "\n")
		if i := strings.LastIndex(goal, "\n"); i >= 0 {
			goal = goal[:i]
		}
	}
	return goal
}

func plannedList(goal string) string {
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
	for _, id := range fakeFeatures {
		l.Features = append(l.Features, feature{ID: id, Category: "functional",
			Description: "The marker file " + id + ".done exists", Steps: []string{"touch " + id + ".done"},
			Verify: "test -f " + id + ".done"})
	}
	data, _ := json.MarshalIndent(l, "", "  ")
	return string(data) + "\n"
}
