package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grub-dev/grub/internal/proc"
)

// Caps and defaults the tools apply. Tool descriptions quote them from here,
// so what the model is told is what the code does.
const (
	// DefaultInlineLimit is the largest tool result, in bytes, handed to the
	// model as is; a larger one is spilled (see Config.InlineLimit).
	DefaultInlineLimit = 16 << 10
	// MinInlineLimit is the smallest inline limit All accepts: below it a
	// spilled result's preview has no room for its head and tail.
	MinInlineLimit = 1 << 10
	// DefaultSpillCap is how many bytes the tools of one turn may write to
	// spill files (see Config.SpillCap).
	DefaultSpillCap = 256 << 20
	// DefaultShellTimeout is how long a shell command may run when the
	// model does not ask for another timeout.
	DefaultShellTimeout = 10 * time.Minute
	// MaxShellTimeout is the longest timeout a shell call may ask for.
	MaxShellTimeout = 30 * time.Minute
	// DefaultMaxGrepMatches is how many matching lines grep shows.
	DefaultMaxGrepMatches = 200
	// MaxReadLines is the most lines one read_file call returns.
	MaxReadLines = 2000
	// MaxLineChars is where read_file cuts a long line.
	MaxLineChars = 2000
	// MaxGrepLineChars is where grep cuts a long matching line.
	MaxGrepLineChars = 500
	// MaxEditBytes is the largest file edit_file changes.
	MaxEditBytes = 10 << 20
	// DefaultListDepth is how deep list_files descends when not asked.
	DefaultListDepth = 1
	// MaxListDepth is the deepest list_files descends.
	MaxListDepth = 5
	// MaxListEntries is the most entries list_files shows.
	MaxListEntries = 1000
	// MaxGlobResults is the most paths glob shows.
	MaxGlobResults = 1000
)

// Result is what a tool call returns to the model.
type Result struct {
	// Text is the content of the tool message the model receives. It is at
	// most Config.InlineLimit bytes.
	Text string
	// IsError reports a mistake of the model (a bad path, no unique match,
	// a timeout): Text says what went wrong and how to do better.
	IsError bool
	// SpillPath, when set, is where the full text of a result larger than
	// the inline limit was written (relative to the workspace when the
	// spill folder is inside it, absolute otherwise); Text is then a
	// preview naming it.
	SpillPath string
}

// Tool is one tool the built-in agent offers the model.
//
// Run returns a model mistake as a Result with IsError set and a nil error;
// a non-nil error means the machinery failed (the workspace is gone, a spill
// file could not be written) or ctx was cancelled, and the turn should end.
type Tool interface {
	// Name is the function name the model calls.
	Name() string
	// Description tells the model what the tool does and its limits.
	Description() string
	// Parameters is the JSON Schema of the call's arguments.
	Parameters() json.RawMessage
	// Run executes one call with the JSON arguments the model sent.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Config is what the tools need to know about the task they serve.
type Config struct {
	// Workspace is the absolute path of the workspace root: the shell's
	// working directory, and the folder every path must stay in.
	Workspace string
	// SpillDir is the absolute path of the folder where results larger
	// than InlineLimit are written. read_file may read it even if it is
	// outside the workspace.
	SpillDir string
	// TasksDir is the name of the folder under the workspace root that
	// holds one folder per task; Protected and Skipped name entries
	// TasksDir/<id>/<name> of those folders (any task). The harness
	// provides it. "" means there is none, and then Protected and Skipped
	// must be empty.
	TasksDir string
	// Protected names the files of a task folder (any task) that no tool
	// may read or write, each with the reason the model is told; the
	// harness provides the list. Nil protects nothing.
	Protected map[string]string
	// ReadOnly names the files of a task folder (any task) that tools may
	// read but never write (grub's records the agent reads), each with the
	// reason the model is told; the harness provides the list.
	ReadOnly map[string]string
	// Skipped names the folders of a task folder (any task) that
	// list_files, glob and grep do not enter from outside (they still show
	// them): the harness's transcripts and spilled outputs, whose copies of
	// earlier tool results would drown real matches. The harness provides
	// the list. Nil skips none.
	Skipped []string
	// InlineLimit is the largest result, in bytes, given to the model
	// whole; zero means DefaultInlineLimit.
	InlineLimit int
	// SpillCap caps the bytes the tools built by one All (one turn) write
	// to spill files together; past it a large output is dropped (the
	// model gets its head and tail and a note saying so). Zero means
	// DefaultSpillCap.
	SpillCap int64
	// ShellTimeout is the shell tool's default timeout; zero means
	// DefaultShellTimeout.
	ShellTimeout time.Duration
	// MaxGrepMatches caps the matching lines grep shows; zero means
	// DefaultMaxGrepMatches.
	MaxGrepMatches int
	// Started, if set, receives the process group of every shell command
	// as it starts, so that the controller can record it in the task's
	// lock and end it after a crash.
	Started func(pgid int)
	// Env, when non-nil, is the whole environment shell commands start
	// from (the caller scrubs grub's secrets from it); nil means grub's own.
	Env []string
	// Wrap, when set, puts a launcher in front of every shell command (the
	// sandbox); see proc.Spec.Wrap.
	Wrap proc.Wrapper

	// budget is the spill budget All shares between the tools it builds;
	// a tool built alone gets its own.
	budget *spillBudget
}

// DefaultConfig returns the default configuration for a workspace whose
// task spills large results to spillDir: results over 16 KiB spilled,
// shell commands limited to 10 minutes, grep showing 200 matches, no tasks
// folder known, so no file protected and no folder skipped.
func DefaultConfig(workspace, spillDir string) Config {
	return Config{
		Workspace:      workspace,
		SpillDir:       spillDir,
		InlineLimit:    DefaultInlineLimit,
		ShellTimeout:   DefaultShellTimeout,
		MaxGrepMatches: DefaultMaxGrepMatches,
	}
}

// withDefaults fills the zero fields of c with their defaults.
func (c Config) withDefaults() Config {
	if c.InlineLimit <= 0 {
		c.InlineLimit = DefaultInlineLimit
	}
	if c.ShellTimeout <= 0 {
		c.ShellTimeout = DefaultShellTimeout
	}
	if c.MaxGrepMatches <= 0 {
		c.MaxGrepMatches = DefaultMaxGrepMatches
	}
	if c.SpillCap <= 0 {
		c.SpillCap = DefaultSpillCap
	}
	return c
}

// validate reports a configuration the tools cannot work with.
func (c Config) validate() error {
	if c.Workspace == "" {
		return errors.New("tools: Config.Workspace is empty: set it to the absolute path of the workspace root")
	}
	if !filepath.IsAbs(c.Workspace) {
		return fmt.Errorf("tools: Config.Workspace %q is not absolute: pass the absolute path of the workspace root", c.Workspace)
	}
	fi, err := os.Stat(c.Workspace)
	if err != nil {
		return fmt.Errorf("tools: Config.Workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tools: Config.Workspace %s is not a folder", c.Workspace)
	}
	if c.SpillDir == "" {
		return errors.New("tools: Config.SpillDir is empty: set it to the absolute path of the spill folder")
	}
	if !filepath.IsAbs(c.SpillDir) {
		return fmt.Errorf("tools: Config.SpillDir %q is not absolute: pass an absolute path", c.SpillDir)
	}
	if err := c.tasksErr(); err != nil {
		return err
	}
	if c.InlineLimit < MinInlineLimit {
		return fmt.Errorf("tools: Config.InlineLimit %d is below the minimum of %d bytes", c.InlineLimit, MinInlineLimit)
	}
	return nil
}

// tasksErr reports names of task folder entries given without the folder
// they are in: protection that would silently apply to nothing.
func (c Config) tasksErr() error {
	if c.TasksDir == "" && (len(c.Protected) > 0 || len(c.ReadOnly) > 0 || len(c.Skipped) > 0) {
		return errors.New("tools: Config.Protected or Config.Skipped is set but Config.TasksDir is empty: set it to the name of the folder holding the task folders")
	}
	return nil
}

// All returns every tool, in a stable order (shell, read_file, write_file,
// edit_file, list_files, glob, grep), built from cfg with its zero fields
// set to their defaults and sharing one spill budget (Config.SpillCap): build
// them anew for each turn. It fails if the workspace is not an existing
// absolute folder, no spill folder is known or the inline limit is below
// MinInlineLimit.
func All(cfg Config) ([]Tool, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.budget = newSpillBudget(cfg.SpillCap)
	return []Tool{
		NewShellTool(cfg),
		NewReadFileTool(cfg),
		NewWriteFileTool(cfg),
		NewEditFileTool(cfg),
		NewListFilesTool(cfg),
		NewGlobTool(cfg),
		NewGrepTool(cfg),
	}, nil
}

// mistake is a model mistake: its text goes back to the model as an
// IsError result.
type mistake struct{ msg string }

func (m *mistake) Error() string { return m.msg }

// mistakef builds a model mistake.
func mistakef(format string, args ...any) error {
	return &mistake{msg: fmt.Sprintf(format, args...)}
}

// finish turns what a tool's body returned into Run's answer: a mistake
// becomes an IsError result, another error stays a Go error, and a text
// over the inline limit is spilled.
func finish(sp *spiller, text string, err error) (Result, error) {
	var m *mistake
	if errors.As(err, &m) {
		return sp.result(m.msg, true)
	}
	if err != nil {
		return Result{}, err
	}
	return sp.result(text, false)
}

// base holds what every tool has: its name, description, schema, the
// workspace it is confined to and the spiller for its large results.
type base struct {
	name   string
	desc   string
	params json.RawMessage
	ws     *workspace
	sp     *spiller
}

func newBase(name, descTemplate string, params any, cfg Config) base {
	cfg = cfg.withDefaults()
	ws := newWorkspace(cfg)
	return base{
		name:   name,
		desc:   renderDescription(name, descTemplate, cfg),
		params: schemaFor(params),
		ws:     ws,
		sp:     newSpiller(name, cfg, ws),
	}
}

// Name implements Tool.
func (b *base) Name() string { return b.name }

// Description implements Tool.
func (b *base) Description() string { return b.desc }

// Parameters implements Tool.
func (b *base) Parameters() json.RawMessage { return b.params }
