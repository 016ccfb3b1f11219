package cli

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/config"
	"github.com/grub-dev/grub/internal/mcpserver"
)

// NewCmdMCP builds grub mcp, the MCP server (internal/mcpserver).
func NewCmdMCP(f *Factory) *cobra.Command {
	var allowUnsafe bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve grub to MCP clients (Claude Code, Codex, Cursor) on stdin and stdout",
		Long: `Run an MCP server on stdin and stdout, so that an MCP client (Claude Code,
Codex, Cursor, any other) runs long goals through grub. Its tools are
grub's commands: grub_start (a task run in the background, as grub start
--detach), grub_status, grub_list, grub_log, grub_report (Markdown),
grub_history, grub_wait (until the task's status changes, with progress
notifications), grub_steer, grub_answer, grub_pause, grub_resume,
grub_stop and grub_edit (goal, limits and budgets). Their arguments are
the flags' long names with _ for -, and workspace, the project folder
(default: the folder grub mcp runs in, or -C). Resources
grub://tasks/{id}/status, /features and /report can be subscribed to.

What a tool does and the errors it gives are the commands' own. One rule
is the server's: a client cannot set what runs programs as you, lifts or
widens the sandbox, passes secrets through or sends your key elsewhere
(the keys grub config --help lists as needing trust: --sandbox off,
--sandbox-show, --pass-env, --on-turn, --agent-cmd, --base-url, …). Those
come from your own config file or a trusted .grub/config.toml, as for
grub start, unless you start the server with --allow-unsafe-options.

Set it up:
  claude mcp add grub -- grub mcp
  Codex, in ~/.codex/config.toml:   [mcp_servers.grub]
                                    command = "grub"
                                    args = ["mcp"]
  Cursor, in .cursor/mcp.json:      {"mcpServers": {"grub": {"command": "grub", "args": ["mcp"]}}}`,
		Example: `  grub mcp
  grub -C ~/src/api mcp
  grub mcp --allow-unsafe-options   # clients may set agent commands, hooks and the sandbox`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := f.Root()
			if err != nil {
				return err
			}
			g := &mcpserver.Grub{
				Version:     readBuildInfo().Version,
				Workspace:   root,
				Run:         inProcess(f),
				StartFlags:  toolFlags(NewCmdStart(&Factory{IO: f.IO}, nil).LocalNonPersistentFlags(), "goal-file"),
				ResumeFlags: toolFlags(NewCmdResume(&Factory{IO: f.IO}, nil).LocalNonPersistentFlags()),
				EditFlags:   editToolFlags(f),
				NeedsTrust:  mcpNeedsTrust,
				AllowUnsafe: allowUnsafe,
				Watch:       watchTask(f),
				RunnerLog:   harness.FileRunnerLog,
			}
			return mcpserver.Serve(ctxOr(cmd.Context()), g, io.NopCloser(f.IO.In), nopWriteCloser{f.IO.Out})
		},
	}
	cmd.Flags().BoolVar(&allowUnsafe, "allow-unsafe-options", false,
		"let clients give the options that need trust (agent commands, hooks, the sandbox off or widened, --pass-env, --base-url)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// inProcess runs a grub command line in this process, as grub would run
// it, with its output captured: the MCP tools' one way to grub.
func inProcess(f *Factory) func(context.Context, []string) mcpserver.Result {
	return func(ctx context.Context, args []string) mcpserver.Result {
		var out, errOut bytes.Buffer
		g := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Now: f.Now, Getenv: f.Getenv, OpenStore: f.OpenStore, Landlock: f.Landlock}
		code := execute(ctx, g, args)
		return mcpserver.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
	}
}

// toolFlags are a command's flags as tool arguments: all but help, how a
// run shows progress (the tools run it detached) and skip.
func toolFlags(fl *pflag.FlagSet, skip ...string) []mcpserver.Flag {
	var out []mcpserver.Flag
	fl.VisitAll(func(fl *pflag.Flag) {
		switch {
		case fl.Hidden, slices.Contains([]string{"help", "json", "no-progress", "heartbeat", "detach"}, fl.Name), slices.Contains(skip, fl.Name):
			return
		}
		out = append(out, mcpserver.Flag{Name: fl.Name, Type: fl.Value.Type(), Usage: fl.Usage})
	})
	return out
}

// editToolFlags are grub_edit's arguments: edit's --goal and its limits
// and budgets (limitFlags), not its sandbox or hooks.
func editToolFlags(f *Factory) []mcpserver.Flag {
	scratch := &cobra.Command{Use: "limits"}
	var l limitFlags
	l.register(scratch)
	limits := map[string]bool{}
	scratch.Flags().VisitAll(func(fl *pflag.Flag) { limits[fl.Name] = true })
	var out []mcpserver.Flag
	for _, fl := range toolFlags(NewCmdEdit(&Factory{IO: f.IO}, nil).LocalNonPersistentFlags()) {
		if fl.Name == "goal" || limits[fl.Name] {
			out = append(out, fl)
		}
	}
	return out
}

// mcpNeedsTrust is trust.go's rule for a defaults file's setting, for a
// tool's argument: why it needs trust, "" when it does not.
func mcpNeedsTrust(flag string, values []string) string {
	if needsTrust(config.Setting{Key: flag, Values: values}) {
		return trustKeys[flag]
	}
	return ""
}

// watchTask is harness's watch of a task's files, on the store that
// holds the task (any work tree of the workspace).
func watchTask(f *Factory) func(string, string, func()) (func(), error) {
	return func(workspace, id string, changed func()) (func(), error) {
		g := &Factory{IO: f.IO, WorkDir: workspace, Now: f.Now, Getenv: f.Getenv, OpenStore: f.OpenStore, Landlock: f.Landlock}
		store, id, err := openTask(g.Store, id)
		if err != nil {
			return nil, err
		}
		return store.WatchTask(id, changed)
	}
}
