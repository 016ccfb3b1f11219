package main

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"

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
// command of the model first runs `sh "$PROBE" shell` (see sandbox.txtar);
// with expire, the key is refused (401) from the first request of an
// execution turn on. Setup errors: key=K refuses any other key (401);
// models=A,B lists those models and refuses others (404 model_not_found);
// nov1 points $OPENAI_BASE_URL at the server without /v1; closed points
// it at a port where nothing listens.
//
//	fakeopenai [quota|nousage|probe|expire|nov1|closed] [key=K] [models=A,B]
func cmdFakeOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	mode := ""
	srv := llmtest.NewServer()
	for _, a := range args {
		switch k, v, _ := strings.Cut(a, "="); k {
		case "key":
			srv.SetKey(v)
		case "models":
			srv.SetModels(strings.Split(v, ",")...)
		default:
			if mode != "" {
				ts.Fatalf("fakeopenai: two modes, %s and %s", mode, a)
			}
			mode = a
		}
	}
	known := []string{"", "quota", "nousage", "gitplant", "gitredirect", "controlplant", "configplant", "probe", "expire", "nov1", "closed"}
	if neg || !slices.Contains(known, mode) {
		ts.Fatalf("usage: fakeopenai [quota|nousage|gitplant|gitredirect|controlplant|configplant|probe|expire|nov1|closed] [key=K] [models=A,B]")
	}
	base := srv.URL()
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
	case "expire":
		srv.SetFallback(expiringModel())
	case "nov1":
		srv.SetFallback(scriptedModel)
		base = strings.TrimSuffix(base, "/v1")
	case "closed":
		base = closedURL(ts)
	default:
		srv.SetFallback(scriptedModel)
	}
	ts.Setenv("OPENAI_BASE_URL", base)
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

// expiringModel is the scripted model until the first request of an
// execution turn; from then on the key is refused, as when it is revoked
// in the middle of a run.
func expiringModel() func(llmtest.Request) llmtest.Step {
	var mu sync.Mutex
	expired := false
	return func(r llmtest.Request) llmtest.Step {
		mu.Lock()
		defer mu.Unlock()
		if !expired && len(r.Decoded) > 2 && !strings.Contains(r.Decoded[2].Content, "Do not implement any feature yet") {
			expired = true
		}
		if expired {
			return llmtest.Step{Fault: llmtest.Status, Status: 401, Code: "invalid_api_key", Message: "Incorrect API key provided: the key was revoked (llmtest)"}
		}
		return scriptedModel(r)
	}
}

// closedURL is a base URL where nothing listens: a loopback port that was
// bound a moment ago and closed.
func closedURL(ts *testscript.TestScript) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := l.Addr().String()
	ts.Check(l.Close())
	return "http://" + addr + "/v1"
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
			if assistantTurns == 0 { // the prompt follows the turn context
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
