package cli

import (
	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagValues are the values shell completion offers for the flags that
// take one of a few words, with what each means.
var flagValues = map[string][]cobra.Completion{
	"sandbox": {
		cobra.CompletionWithDesc("workspace-write", "read anywhere, write the workspace, the temp directory and the caches"),
		cobra.CompletionWithDesc("read-only", "read anywhere, write only the temp directory"),
		cobra.CompletionWithDesc("off", "no filesystem confinement"),
		cobra.CompletionWithDesc("default", "the agent's default"),
	},
	"agent": {
		cobra.CompletionWithDesc("openai", "the built-in agent, any OpenAI-compatible server"),
		cobra.CompletionWithDesc("claude", "Claude Code"),
		cobra.CompletionWithDesc("codex", "Codex CLI"),
		cobra.CompletionWithDesc("command", "any program (--agent-cmd)"),
	},
	"format": {
		cobra.CompletionWithDesc("md", "Markdown"),
		cobra.CompletionWithDesc("json", "schemas/report-output.schema.json"),
	},
	"locale": {
		cobra.CompletionWithDesc("en", "English prompts"),
		cobra.CompletionWithDesc("zh", "Chinese prompts"),
	},
}

// folderFlags take a folder or a path: completion offers folders.
var folderFlags = map[string]bool{"workdir": true, "sandbox-allow": true, "dir": true}

// pathFlags take a path to a file or a folder: completion offers both.
var pathFlags = map[string]bool{"sandbox-hide": true, "sandbox-show": true, "goal-file": true, "html": true}

// registerFlagCompletions gives every flag of cmd and its subcommands
// that takes one of a few words, a task id or a path the completion that
// fits, so that a shell completes grub start --sandbox <TAB>.
func registerFlagCompletions(f *Factory, cmd *cobra.Command) {
	register := func(fl *pflag.Flag) {
		name := fl.Name
		var fn cobra.CompletionFunc
		switch {
		case flagValues[name] != nil:
			values := flagValues[name]
			fn = cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
		case name == "allow-domain":
			var presets []cobra.Completion
			for _, p := range netproxy.PresetNames() {
				presets = append(presets, cobra.CompletionWithDesc(p, "the registry's hosts"))
			}
			fn = cobra.FixedCompletions(presets, cobra.ShellCompDirectiveNoFileComp)
		case name == "task" && fl.Value.Type() == "string":
			ids := completeTaskIDs(f)
			fn = func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return ids(c, nil, toComplete)
			}
		case folderFlags[name]:
			fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
		case pathFlags[name]:
			fn = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return nil, cobra.ShellCompDirectiveDefault
			}
		default:
			return
		}
		if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
			_ = cmd.RegisterFlagCompletionFunc(name, fn)
		}
	}
	cmd.LocalNonPersistentFlags().VisitAll(register)
	if cmd.Root() == cmd {
		cmd.PersistentFlags().VisitAll(register)
	}
	for _, sub := range cmd.Commands() {
		registerFlagCompletions(f, sub)
	}
}
