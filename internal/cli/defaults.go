package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/config"
	"github.com/grub-dev/grub/internal/termsafe"
)

// Defaults files: .grub/config.toml in the workspace and the user's
// config.toml hold defaults for grub start, keyed by its long flags. A
// value comes from, in order: the flag, the environment (envSettings), the
// workspace file, the user file, the flag's built-in default. resume and
// edit do not read the files: a task keeps the settings it was started
// with.

// notSettings are flags of grub start that a file cannot set: the goal
// (--goal-file) is the task's own, never a default.
var notSettings = map[string]bool{"help": true, "json": true, "goal-file": true}

// flagKinds maps a pflag value type to the kind of TOML value a file
// writes it in.
var flagKinds = map[string]config.Kind{
	"string":      config.String,
	"bool":        config.Bool,
	"int":         config.Int,
	"int64":       config.Int,
	"float64":     config.Float,
	"duration":    config.Duration,
	"stringArray": config.List,
}

// envSettings are the settings an environment variable gives, above the
// files; the built-in agent (openai) is the only one that reads them.
var envSettings = map[string]string{"model": "GRUB_MODEL", "base-url": "OPENAI_BASE_URL"}

// settingKeys are the keys a defaults file may hold: the long names of
// the command's own flags (not the inherited -C, not --help or --json),
// with the kind of value each takes.
func settingKeys(fl *pflag.FlagSet) config.Keys {
	keys := config.Keys{}
	fl.VisitAll(func(f *pflag.Flag) {
		if notSettings[f.Name] {
			return
		}
		kind, ok := flagKinds[f.Value.Type()]
		if !ok {
			panic(fmt.Sprintf("grub start --%s: a flag of type %s has no kind in flagKinds", f.Name, f.Value.Type()))
		}
		keys[f.Name] = kind
	})
	return keys
}

// settingSource is where a setting's value comes from: a file and line,
// a flag ("--model"), a variable ("GRUB_MODEL") or "default".
type settingSource struct {
	Name string
	Line int // in the file; 0 for the others
}

func (s settingSource) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d", s.Name, s.Line)
	}
	return s.Name
}

// fromFile reports whether the value comes from a defaults file.
func (s settingSource) fromFile() bool { return s.Line > 0 }

// startDefaults is the outcome of applying the defaults files to grub
// start's flags.
type startDefaults struct {
	// Files are the files read, the user's first; a missing file is left
	// out.
	Files []*config.File
	// From says where each setting comes from, by key.
	From map[string]settingSource
	// Trust says whether the workspace's file is trusted; when it is not,
	// Files holds it without the keys that need trust (trustFiles).
	Trust workspaceTrust
}

// defaultsFiles reads the user's file and the workspace's, in that order
// (the later wins).
func defaultsFiles(root string, getenv func(string) string, keys config.Keys) ([]*config.File, error) {
	var files []*config.File
	userPath, userName := config.UserFile(getenv)
	for _, p := range []struct{ path, name string }{
		{userPath, userName},
		{filepath.Join(root, config.WorkspaceFile), config.WorkspaceFile},
	} {
		if p.path == "" {
			continue
		}
		f, err := config.Load(p.path, p.name, keys)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		if f != nil {
			files = append(files, f)
		}
	}
	return files, nil
}

// fileSetting is a setting with the file it is in.
type fileSetting struct {
	config.Setting
	File string
}

// winners returns, by key, the setting of the file that wins. A file that
// sets agent-cmd without agent sets agent = "command", as --agent-cmd
// alone does.
func winners(files []*config.File) map[string]fileSetting {
	win := map[string]fileSetting{}
	for _, f := range files {
		for _, s := range f.Settings {
			win[s.Key] = fileSetting{s, f.Name}
		}
		if cmd, ok := f.Lookup("agent-cmd"); ok {
			if _, ok := f.Lookup("agent"); !ok {
				win["agent"] = fileSetting{config.Setting{Key: "agent", Values: []string{string(harness.AgentCommand)}, Line: cmd.Line}, f.Name}
			}
		}
	}
	return win
}

// applyDefaults reads the defaults files of the workspace root and the
// user, and sets each flag of fl that neither the command line nor the
// environment gives to the value of the file that wins, parsed by the
// flag itself. It returns where every setting comes from.
//
// A file's value for an agent flag (agentOnlyFlags) is a default, read
// when the task's backend uses it; other flags it sets count as given,
// so that code reading fl.Changed (the sandbox flags) sees them.
func applyDefaults(fl *pflag.FlagSet, root string, getenv func(string) string) (*startDefaults, error) {
	keys := settingKeys(fl)
	files, err := defaultsFiles(root, getenv, keys)
	if err != nil {
		return nil, err
	}
	d := &startDefaults{From: map[string]settingSource{}}
	if files, d.Trust, err = trustFiles(files, root, getenv); err != nil {
		return nil, err
	}
	d.Files = files
	win := winners(files)
	kind := newTaskAgent(fl, win)
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, key := range names {
		f := fl.Lookup(key)
		w, inFile := win[key]
		env := envSettings[key]
		switch {
		case f.Changed:
			d.From[key] = settingSource{Name: "--" + key}
		case env != "" && getenv(env) != "" && kind == harness.AgentOpenAI:
			d.From[key] = settingSource{Name: env}
		case inFile:
			if err := setFlag(f, w, keys[key], root); err != nil {
				return nil, err
			}
			if _, agentOnly := agentOnlyFlags[key]; !agentOnly && key != "agent" {
				f.Changed = true
			}
			d.From[key] = settingSource{Name: w.File, Line: w.Line}
		default:
			d.From[key] = settingSource{Name: "default"}
		}
	}
	return d, nil
}

// newTaskAgent is the backend a new task gets, as agentFlags.apply
// decides it, with the files' values in place of the flags' defaults.
func newTaskAgent(fl *pflag.FlagSet, win map[string]fileSetting) harness.AgentKind {
	switch {
	case fl.Changed("agent"):
		return harness.AgentKind(fl.Lookup("agent").Value.String())
	case fl.Changed("agent-cmd"):
		return harness.AgentCommand
	}
	if w, ok := win["agent"]; ok {
		return harness.AgentKind(w.Values[0])
	}
	return harness.AgentKind(fl.Lookup("agent").Value.String())
}

// setFlag sets flag f to a file's value through the flag's own parser. A
// relative --sandbox-allow path is relative to the workspace root.
func setFlag(f *pflag.Flag, w fileSetting, kind config.Kind, root string) error {
	vals := slices.Clone(w.Values)
	if f.Name == "sandbox-allow" {
		for i, p := range vals {
			if p != "" && !filepath.IsAbs(p) {
				vals[i] = filepath.Join(root, p)
			}
		}
	}
	var err error
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		err = sv.Replace(vals)
	} else {
		err = f.Value.Set(vals[0])
	}
	if err != nil {
		return &UsageError{Err: &config.Error{File: w.File, Line: w.Line, Key: w.Key,
			Msg: fmt.Sprintf("%q is not valid: expected %s", vals[0], kind.Expected())}}
	}
	return nil
}

// leadingFlag finds the flag a usage error is about: grub's messages
// about a flag's value start with it ("--max-iter 0: must be at least 1").
var leadingFlag = regexp.MustCompile(`^--([a-z0-9-]+)`)

// explain adds the file, line and key to a usage error about a value that
// came from a defaults file.
func (d *startDefaults) explain(err error) error {
	var ue *UsageError
	if d == nil || !errors.As(err, &ue) {
		return err
	}
	m := leadingFlag.FindStringSubmatch(ue.Err.Error())
	if m == nil {
		return err
	}
	src := d.From[m[1]]
	if !src.fromFile() {
		return err
	}
	return &UsageError{Err: fmt.Errorf("%s: %s: %w", src, m[1], ue.Err), Command: ue.Command}
}

// flagsLike returns a command with the flags register declares, set to
// the values fl's flags of the same names got from the defaults files,
// as if they had been given: grub config reads what a new task would get
// through the same code as grub start.
func flagsLike(fl *pflag.FlagSet, d *startDefaults, register func(*cobra.Command)) *cobra.Command {
	c := &cobra.Command{}
	register(c)
	c.Flags().VisitAll(func(f *pflag.Flag) {
		src := fl.Lookup(f.Name)
		if src == nil || !d.From[f.Name].fromFile() {
			return
		}
		if sv, ok := src.Value.(pflag.SliceValue); ok {
			_ = f.Value.(pflag.SliceValue).Replace(sv.GetSlice())
		} else {
			_ = f.Value.Set(src.Value.String()) // the same type: its own text parses
		}
		f.Changed = true
	})
	return c
}

// configSetting is one setting of a new task in grub config's output.
type configSetting struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
	From  string `json:"from"`
}

// settingsOf lists fl's settings (the keys of the defaults files) with
// their values and sources, by key; a value an environment variable gives
// is read from getenv (the flag keeps its default then).
func settingsOf(fl *pflag.FlagSet, d *startDefaults, getenv func(string) string) []configSetting {
	keys := settingKeys(fl)
	var out []configSetting
	for _, f := range sortedFlags(fl) {
		kind, ok := keys[f.Name]
		if !ok {
			continue
		}
		var v any = f.Value.String()
		switch kind {
		case config.Bool, config.Int, config.Float:
			v = json.RawMessage(f.Value.String())
		case config.List:
			v = slices.Clone(f.Value.(pflag.SliceValue).GetSlice())
			if v.([]string) == nil {
				v = []string{}
			}
		}
		if env := envSettings[f.Name]; env != "" && d.From[f.Name].Name == env {
			v = getenv(env)
		}
		out = append(out, configSetting{Key: f.Name, Value: v, From: d.From[f.Name].String()})
	}
	return out
}

func sortedFlags(fl *pflag.FlagSet) []*pflag.Flag {
	var all []*pflag.Flag
	fl.VisitAll(func(f *pflag.Flag) { all = append(all, f) }) // VisitAll is in lexical order
	return all
}

// openAISetting is the built-in agent's model or base URL and where it
// comes from: the variable, else a defaults file; empty when neither.
func openAISetting(fl *pflag.FlagSet, d *startDefaults, getenv func(string) string, key string) (value, from string) {
	if v := getenv(envSettings[key]); v != "" {
		return v, envSettings[key]
	}
	if src := d.From[key]; src.fromFile() {
		return fl.Lookup(key).Value.String(), src.String()
	}
	return "", ""
}

// printSettings prints grub config's list of the files read and of
// every setting of grub start with its source.
func printSettings(row func(k, v string), c configOutput) {
	files := "none (.grub/config.toml, ~/.config/grub/config.toml)"
	if len(c.Files) > 0 {
		files = strings.Join(c.Files, ", ") + " (the later wins)"
	}
	row("files", files)
	row("settings", "for grub start: flag > environment > .grub/config.toml > user file > default")
	for _, s := range c.Settings {
		var v string
		switch x := s.Value.(type) {
		case []string:
			quoted := make([]string, len(x))
			for i, e := range x {
				quoted[i] = strconv.Quote(e)
			}
			v = "[" + strings.Join(quoted, ", ") + "]"
		case string:
			v = strconv.Quote(x)
		default:
			b, _ := json.Marshal(x)
			v = string(b)
		}
		row("  "+s.Key, termsafe.Line(v)+" ("+s.From+")")
	}
}
