package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tool is one of grub's tools: its arguments and what it runs.
type tool struct {
	name, desc string
	props      []prop
	flags      []Flag
	required   []string
	readOnly   bool
	run        func(ctx context.Context, req *mcp.CallToolRequest, c *call) *mcp.CallToolResult
}

// call is one tool call: its arguments and workspace.
type call struct {
	tool string
	args args
	ws   string
}

func (s *server) addTools() {
	for _, t := range s.tools() {
		t := t
		readOnly := t.readOnly
		s.srv.AddTool(&mcp.Tool{
			Name:        t.name,
			Description: t.desc,
			InputSchema: inputSchema(t.props, t.flags, t.required...),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := decodeArgs(t.name, req.Params.Arguments, t.props, t.flags)
			if err != nil {
				return toolError(err.Error(), 2), nil
			}
			ws, err := s.workspace(a)
			if err != nil {
				return toolError(err.Error(), 2), nil
			}
			return t.run(ctx, req, &call{tool: t.name, args: a, ws: ws}), nil
		})
	}
}

func (s *server) tools() []tool {
	ws, id := workspaceProp, idProp
	return []tool{
		{name: "grub_start", desc: "Create a task for a goal and run it in the background (grub start --detach): returns the task's id and where its files are. " +
			"The other arguments are grub start's flags; those that run programs, lift the sandbox or pass secrets through come only from your own config unless grub mcp runs with --allow-unsafe-options.",
			props: []prop{{"goal", "string", "the goal, as you would give it to grub start"}, ws}, flags: s.g.StartFlags, required: []string{"goal"}, run: s.start},
		{name: "grub_status", desc: "A task's status (grub status --json): status, phase, iteration, features, usage, the agent's open question (lastDecision.question) and what to do next.",
			props: []prop{id, ws}, readOnly: true, run: s.status},
		{name: "grub_list", desc: "Every task of the workspace (grub list --json).", props: []prop{ws}, readOnly: true, run: s.list},
		{name: "grub_log", desc: "The end of a task's progress log (grub log): one entry per turn.",
			props: []prop{id, {"lines", "integer", "how many lines from the end (default 60)"}, ws}, readOnly: true, run: s.log},
		{name: "grub_report", desc: "A task's report in Markdown (grub report --format md): outcome, features, what the referee caught, every turn.",
			props: []prop{id, ws}, readOnly: true, run: s.report},
		{name: "grub_history", desc: "A task's turns as git has them (grub history --json).", props: []prop{id, ws}, readOnly: true, run: s.history},
		{name: "grub_wait", desc: "Wait until a task's status changes or its runner stops, at most `seconds` (default 60, at most 600); " +
			"sends progress notifications (turn, feature, what the runner reports) while it waits when the call has a progress token. Returns the status.",
			props: []prop{id, {"seconds", "number", "how long to wait at most (default 60, at most 600)"}, ws}, readOnly: true, run: s.wait},
		{name: "grub_steer", desc: "Give the agent guidance for its next turn (grub steer).",
			props: []prop{id, {"message", "string", "the guidance, in your words"}, ws}, required: []string{"message"}, run: s.steer},
		{name: "grub_answer", desc: "Answer the question the agent asked (grub_status shows it, with its options) and continue the task in the background (grub answer --detach). An option's number picks that option.",
			props: []prop{id, {"answer", "string", "the answer, or an option's number"}, ws}, required: []string{"answer"}, run: s.answer},
		{name: "grub_pause", desc: "Pause a task at the next turn boundary (grub pause); now: cancel the current turn instead.",
			props: []prop{id, {"now", "boolean", "cancel the current turn instead of letting it finish"}, ws}, run: s.simple("pause", "now")},
		{name: "grub_resume", desc: "Continue a task that stopped, in the background (grub resume --detach); the other arguments are grub resume's flags, under the same rule as grub_start's.",
			props: []prop{id, ws}, flags: s.g.ResumeFlags, run: s.resume},
		{name: "grub_stop", desc: "Stop a task at the next turn boundary (grub stop).", props: []prop{id, ws}, run: s.simple("stop", "")},
		{name: "grub_edit", desc: "Change a task's goal, limits or budgets (grub edit).", props: []prop{id, ws}, flags: s.g.EditFlags, run: s.edit},
	}
}

// idArgs is the call's id as the command's argument, when given. An id
// is never read as a flag: "--sandbox=off" as the id of grub_resume would
// otherwise reach resume's flags past the rule on what a client may set.
func (c *call) idArgs() ([]string, error) {
	id, err := c.args.str("id")
	if err != nil || id == "" {
		return nil, err
	}
	if strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n") {
		return nil, fmt.Errorf("%s: id %q is not a task id (grub_list lists them)", c.tool, id)
	}
	return []string{id}, nil
}

// jsonCommand runs `grub <cmd> [id] --json` and `grub <cmd> [id]`: the
// object as structured content, the human text as its rendering.
func (s *server) jsonCommand(ctx context.Context, c *call, cmd string, withID bool) *mcp.CallToolResult {
	var rest []string
	if withID {
		var err error
		if rest, err = c.idArgs(); err != nil {
			return toolError(err.Error(), 2)
		}
	}
	r := s.run(ctx, c.ws, append([]string{cmd, "--json"}, rest...)...)
	if r.Code != 0 {
		return failure(r)
	}
	obj, err := jsonObject(r.Stdout)
	if err != nil {
		return toolError(err.Error(), 1)
	}
	text := s.run(ctx, c.ws, append([]string{cmd}, rest...)...)
	return result(obj, strings.TrimRight(text.Stdout+text.Stderr, "\n"))
}

func (s *server) status(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	return s.jsonCommand(ctx, c, "status", true)
}

func (s *server) list(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	return s.jsonCommand(ctx, c, "list", false)
}

func (s *server) history(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	return s.jsonCommand(ctx, c, "history", true)
}

func (s *server) log(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	n, err := c.args.number("lines", 60)
	if err != nil || n < 1 {
		return toolError("grub_log: lines must be a positive number", 2)
	}
	r := s.run(ctx, c.ws, append([]string{"log"}, rest...)...)
	if r.Code != 0 {
		return failure(r)
	}
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if len(lines) > int(n) {
		lines = lines[len(lines)-int(n):]
	}
	text := strings.Join(lines, "\n")
	if r.Stdout == "" {
		text = strings.TrimSpace(r.Stderr)
	}
	return result(map[string]any{"lines": len(lines), "text": text}, text)
}

func (s *server) report(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	r := s.run(ctx, c.ws, append([]string{"report", "--format", "md"}, rest...)...)
	if r.Code != 0 {
		return failure(r)
	}
	return result(map[string]any{"format": "markdown", "markdown": r.Stdout}, r.Stdout)
}

// start runs grub start --detach, then reads the new task's status.
func (s *server) start(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	goal, err := c.args.required(c.tool, "goal")
	if err != nil {
		return toolError(err.Error(), 2)
	}
	flags, err := s.flagArgs(c.tool, c.args, s.g.StartFlags)
	if err != nil {
		return toolError(err.Error(), 2)
	}
	cmd := append(append([]string{"start", "--detach", "--no-progress"}, flags...), "--", goal)
	return s.detached(ctx, c, s.run(ctx, c.ws, cmd...))
}

// detached is the result of a command run with --detach: the task's id
// (its stdout), where its files are, and its status.
func (s *server) detached(ctx context.Context, c *call, r Result) *mcp.CallToolResult {
	if r.Code != 0 {
		return failure(r)
	}
	id := strings.TrimSpace(r.Stdout)
	st := s.run(ctx, c.ws, "status", id, "--json")
	if st.Code != 0 {
		return failure(st)
	}
	obj, err := jsonObject(st.Stdout)
	if err != nil {
		return toolError(err.Error(), 1)
	}
	out := map[string]any{"id": id, "workspace": c.ws, "status": obj}
	if h, ok := obj["harness"].(string); ok {
		if !filepath.IsAbs(h) {
			h = filepath.Join(c.ws, h)
		}
		out["harness"] = h
		out["log"] = filepath.Join(h, s.g.RunnerLog)
	}
	return result(out, strings.TrimSpace(r.Stderr+"\n"+r.Stdout))
}

func (s *server) resume(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	flags, err := s.flagArgs(c.tool, c.args, s.g.ResumeFlags)
	if err != nil {
		return toolError(err.Error(), 2)
	}
	cmd := append(append([]string{"resume", "--detach", "--no-progress"}, flags...), rest...)
	return s.detached(ctx, c, s.run(ctx, c.ws, cmd...))
}

func (s *server) answer(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	ans, err := c.args.required(c.tool, "answer")
	if err != nil {
		return toolError(err.Error(), 2)
	}
	cmd := append(append([]string{"answer", "--detach", "--no-progress", "--"}, rest...), ans)
	return s.detached(ctx, c, s.run(ctx, c.ws, cmd...))
}

func (s *server) steer(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	msg, err := c.args.required(c.tool, "message")
	if err != nil {
		return toolError(err.Error(), 2)
	}
	return said(s.run(ctx, c.ws, append(append([]string{"steer", "--"}, rest...), msg)...))
}

// simple is a tool that runs `grub <cmd> [id]`, with --<flag> when the
// boolean argument of that name is true.
func (s *server) simple(cmd, flag string) func(context.Context, *mcp.CallToolRequest, *call) *mcp.CallToolResult {
	return func(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
		rest, err := c.idArgs()
		if err != nil {
			return toolError(err.Error(), 2)
		}
		args := []string{cmd}
		if flag != "" {
			on, err := c.args.boolean(flag)
			if err != nil {
				return toolError(err.Error(), 2)
			}
			if on {
				args = append(args, "--"+flag)
			}
		}
		return said(s.run(ctx, c.ws, append(args, rest...)...))
	}
}

func (s *server) edit(ctx context.Context, _ *mcp.CallToolRequest, c *call) *mcp.CallToolResult {
	rest, err := c.idArgs()
	if err != nil {
		return toolError(err.Error(), 2)
	}
	flags, err := s.flagArgs(c.tool, c.args, s.g.EditFlags)
	if err != nil {
		return toolError(err.Error(), 2)
	}
	if len(flags) == 0 {
		return toolError("grub_edit needs something to change: goal, or a limit or budget", 2)
	}
	return said(s.run(ctx, c.ws, append(append([]string{"edit"}, flags...), rest...)...))
}

// said is the result of a command that reports on stderr what it did.
func said(r Result) *mcp.CallToolResult {
	if r.Code != 0 {
		return failure(r)
	}
	text := strings.TrimSpace(r.Stderr + "\n" + r.Stdout)
	return result(map[string]any{"message": text}, text)
}
