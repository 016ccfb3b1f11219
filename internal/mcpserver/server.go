// Package mcpserver is grub mcp: an MCP server on stdio (the official Go
// SDK, which only this package imports) whose tools and resources drive
// grub. It implements none of grub's commands: every tool runs the
// command it stands for in-process through Grub.Run (internal/cli wires
// it), so its results and errors are the CLI's own, word for word. The
// one thing it adds is the safety rule for what a client may ask for
// (Grub.NeedsTrust), and the waiting (grub_wait) and notifying
// (resource subscriptions) around grub status.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Grub is what the server needs from grub; internal/cli fills it in.
type Grub struct {
	// Version is grub's version, the server's as MCP clients see it.
	Version string
	// Workspace is the folder a tool works in when its call names none
	// (grub mcp's -C, else its working directory), absolute.
	Workspace string
	// Run runs grub with args (as on the command line, after the program
	// name) in-process, and returns what it printed and its exit code.
	Run func(ctx context.Context, args []string) Result
	// StartFlags, ResumeFlags and EditFlags are the flags that
	// grub_start, grub_resume and grub_edit take as arguments.
	StartFlags, ResumeFlags, EditFlags []Flag
	// NeedsTrust says why a flag with these values needs the user's
	// trust (it runs programs, lifts the sandbox or passes secrets
	// through), "" when it does not: internal/cli's classification of
	// start's flags (trust.go).
	NeedsTrust func(flag string, values []string) string
	// AllowUnsafe is grub mcp --allow-unsafe-options: clients may give
	// the flags NeedsTrust names.
	AllowUnsafe bool
	// Watch calls changed (on a goroutine of its own) when files of task
	// id in workspace change, until stop is called (harness's watch).
	Watch func(workspace, id string, changed func()) (stop func(), err error)
	// RunnerLog is the name of a detached runner's log in the task's
	// folder (harness.FileRunnerLog).
	RunnerLog string
}

// Result is what one grub command did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Flag is one command-line flag a tool takes as an argument, under its
// long name with "_" for "-".
type Flag struct {
	Name  string // the flag's long name: max-iter
	Type  string // pflag's type name: bool, string, int, int64, float64, duration, stringArray
	Usage string
}

// Arg is the flag's name as a tool argument: max_iter.
func (f Flag) Arg() string { return strings.ReplaceAll(f.Name, "-", "_") }

// Serve runs the server on in and out until the client goes away or ctx
// ends.
func Serve(ctx context.Context, g *Grub, in io.ReadCloser, out io.WriteCloser) error {
	s := newServer(g)
	return s.srv.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

type server struct {
	g   *Grub
	srv *mcp.Server

	mu      sync.Mutex
	watches map[string]*taskWatch // by task URI prefix: grub://tasks/<id>
}

func newServer(g *Grub) *server {
	s := &server{g: g, watches: map[string]*taskWatch{}}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "grub", Title: "grub", Version: g.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true},
		},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	})
	s.addTools()
	s.addResources()
	return s
}

const instructions = `grub keeps an AI coding agent working on one long goal, one verified feature at a time, and referees every turn.
Start a task with grub_start (it runs in the background), follow it with grub_wait (progress notifications while it runs) or grub_status,
steer it with grub_steer, answer the agent's question with grub_answer (grub_status shows it), and read the outcome with grub_report.
Every tool takes "workspace", the project folder (default: the folder grub mcp runs in). Errors are grub's own messages.`

// run runs grub in workspace with args.
func (s *server) run(ctx context.Context, workspace string, args ...string) Result {
	return s.g.Run(ctx, append([]string{"-C", workspace}, args...))
}

// failure is a tool error: the command's message as the CLI prints it.
func failure(r Result) *mcp.CallToolResult {
	msg := strings.TrimSpace(r.Stderr)
	if msg == "" {
		msg = strings.TrimSpace(r.Stdout)
	}
	if msg == "" {
		msg = fmt.Sprintf("grub exited with %d", r.Code)
	}
	return toolError(msg, r.Code)
}

func toolError(msg string, code int) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: map[string]any{"error": msg, "exitCode": code},
	}
}

// result is a tool's success: structured content with a text rendering.
func result(structured any, text string) *mcp.CallToolResult {
	if text == "" {
		b, _ := json.MarshalIndent(structured, "", "  ")
		text = string(b)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: structured}
}

// jsonObject decodes a command's --json output.
func jsonObject(out string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		return nil, fmt.Errorf("grub's --json output: %w", err)
	}
	return m, nil
}
