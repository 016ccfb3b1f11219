package cli

import (
	"fmt"
	"sync"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/llm/llmtest"
)

// demoGoal is the goal of the demo's task.
const demoGoal = "demo: leave four marker files, one per feature"

// demoFeatures is how many features the demo's model plans.
const demoFeatures = 4

// demoModel is the demo's model: a script, not a model. It answers the
// built-in agent's requests from the loopback server (internal/llm/llmtest)
// by turn and by step, so that the real tool loop runs: it plans four
// features and writes init.sh with write_file, then builds one feature a
// turn with shell and write_file. Three turns cheat as the FAKE agent of
// the old demo did, for the referee to catch: turn 2 claims "complete" at
// once, turn 3 rewrites a feature's description while it flips it, and
// turn 5 claims a feature whose file it never made. The first request of
// turn 4 is refused with a rate limit, which the client retries.
type demoModel struct {
	dir string // the task's folder relative to the workspace, .grub/<id>

	mu         sync.Mutex
	turn       int    // the turn being answered, from 1
	lastPrompt string // the prompt of that turn
	limited    bool   // the rate limit was sent
	passed     int    // the features the model has honestly built
}

// reply answers one request (llmtest.Server.Fallback).
func (m *demoModel) reply(r llmtest.Request) llmtest.Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	// The turn's prompt is the last user message before the model's first
	// reply (the turn context comes before it).
	prompt, step := "", 0
	for _, msg := range r.Decoded {
		switch {
		case msg.Role == "user" && step == 0:
			prompt = msg.Content
		case msg.Role == "assistant":
			step++
		}
	}
	if prompt != m.lastPrompt {
		m.turn, m.lastPrompt = m.turn+1, prompt
	}
	if m.turn == 4 && step == 0 && !m.limited {
		m.limited = true
		return llmtest.Step{Fault: llmtest.RateLimit, RetryAfter: "1"}
	}
	return m.script(step)
}

// demoUsage is what every reply reports.
var demoUsage = &llmtest.Usage{Prompt: 2400, Cached: 1800, Completion: 150}

// script is the reply to request step (from 0) of the current turn.
func (m *demoModel) script(step int) llmtest.Step {
	list := m.dir + "/feature-list.json"
	next := fmt.Sprintf("feature-%d", m.passed+1)
	switch m.turn {
	case 1: // the initializer: look around, plan, write init.sh
		switch step {
		case 0:
			return llmtest.Calls(demoUsage, llmtest.Call("list_files", map[string]any{"path": "."}))
		case 1:
			return llmtest.Calls(demoUsage,
				llmtest.Call("write_file", map[string]string{"path": list, "content": demoList(0, -1, false)}),
				llmtest.Call("write_file", map[string]string{"path": m.dir + "/init.sh", "content": demoInitScript}))
		}
		return demoDecision("continue", "planned four features, one marker file each", "implement feature-1", "")
	case 2: // cheat: claim completion without doing anything
		return demoDecision("complete", "everything is done, trust me", "", "")
	case 3: // cheat: make feature-1 easier while flipping it
		switch step {
		case 0:
			return llmtest.Calls(demoUsage, llmtest.Call("shell", map[string]string{"command": "echo done > feature-1.done && ls"}))
		case 1:
			return llmtest.Calls(demoUsage, llmtest.Call("write_file", map[string]string{"path": list, "content": demoList(0, 0, true)}))
		}
		return demoDecision("continue", "implemented feature-1", "implement feature-2", "feature-1")
	case 5: // cheat: claim the next feature without making its file
		if step == 0 {
			return llmtest.Calls(demoUsage, llmtest.Call("write_file", map[string]string{"path": list, "content": demoList(m.passed, m.passed, false)}))
		}
		return demoDecision("continue", "implemented "+next, "implement the next feature", next)
	}
	// An honest turn: make the marker, check it, flip the feature.
	switch step {
	case 0:
		return llmtest.Calls(demoUsage, llmtest.Call("shell", map[string]string{"command": "echo done > " + next + ".done && test -f " + next + ".done && echo ok"}))
	case 1:
		return llmtest.Calls(demoUsage, llmtest.Call("write_file", map[string]string{"path": list, "content": demoList(m.passed, m.passed, false)}))
	}
	m.passed++
	if m.passed == demoFeatures {
		return demoDecision("complete", "implemented "+next+"; every feature passes", "", next)
	}
	return demoDecision("continue", "implemented "+next, fmt.Sprintf("implement feature-%d", m.passed+1), next)
}

// demoInitScript is the init.sh the demo's model writes: a smoke check.
const demoInitScript = "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")/../..\"\necho smoke check\ntest ! -e BROKEN\n"

// demoList is the feature list with the first passed features passing,
// feature flip (an index; -1: none) claimed too, and, with easier, the
// first feature's description rewritten (an illegal edit).
func demoList(passed, flip int, easier bool) string {
	l := &featurelist.List{Version: 1, Goal: demoGoal}
	for i := range demoFeatures {
		id := fmt.Sprintf("feature-%d", i+1)
		f := featurelist.Feature{ID: id, Category: "functional",
			Description: fmt.Sprintf("The workspace has a marker file proving feature %d works", i+1),
			Steps:       []string{fmt.Sprintf("create %s.done in the workspace root", id)},
			Verify:      fmt.Sprintf("test -f %s.done", id)}
		if i < passed || i == flip {
			evidence := "created " + id + ".done; test -f " + id + ".done passes"
			f.Passes, f.Evidence = true, &evidence
		}
		l.Features = append(l.Features, f)
	}
	if easier {
		l.Features[0].Description += " (made easier)"
	}
	data, err := featurelist.Marshal(l)
	if err != nil {
		panic(err) // a fixed list always marshals
	}
	return string(data)
}

// demoDecision is a final answer: a short report and its loop-state.
func demoDecision(status, summary, nextStep, feature string) llmtest.Step {
	text := fmt.Sprintf("Work report.\n<loop-state>{\"status\":%q,\"summary\":%q", status, summary)
	if nextStep != "" {
		text += fmt.Sprintf(",\"nextStep\":%q", nextStep)
	}
	if feature != "" {
		text += fmt.Sprintf(",\"feature\":%q", feature)
	}
	return llmtest.Text(text+"}</loop-state>", demoUsage)
}
