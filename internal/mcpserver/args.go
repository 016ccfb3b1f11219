package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// prop is a tool argument that is not a flag.
type prop struct {
	name, typ, desc string
}

var (
	workspaceProp = prop{"workspace", "string", "the project folder (the workspace root that holds .grub/); default: the folder grub mcp runs in"}
	idProp        = prop{"id", "string", "the task's id (8 hex characters, or the start of them); default: the most recently updated task"}
)

// inputSchema is a tool's input schema: its own arguments, then the
// flags, each under its argument name.
func inputSchema(props []prop, flags []Flag, required ...string) map[string]any {
	p := map[string]any{}
	for _, a := range props {
		p[a.name] = map[string]any{"type": a.typ, "description": a.desc}
	}
	for _, f := range flags {
		p[f.Arg()] = flagSchema(f)
	}
	s := map[string]any{"type": "object", "properties": p, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func flagSchema(f Flag) map[string]any {
	desc := "--" + f.Name + ": " + f.Usage
	switch f.Type {
	case "bool":
		return map[string]any{"type": "boolean", "description": desc}
	case "int", "int64":
		return map[string]any{"type": "integer", "description": desc}
	case "float64":
		return map[string]any{"type": "number", "description": desc}
	case "stringArray":
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc + " (one item per flag)"}
	case "duration":
		return map[string]any{"type": "string", "description": desc + " (a Go duration: 90s, 45m, 2h)"}
	}
	return map[string]any{"type": "string", "description": desc}
}

// args are a tool call's arguments, checked against the tool's names.
type args map[string]json.RawMessage

// decodeArgs reads raw as an object whose keys are names known to the
// tool (its props and flags).
func decodeArgs(tool string, raw json.RawMessage, props []prop, flags []Flag) (args, error) {
	a := args{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("%s: the arguments must be a JSON object: %v", tool, err)
		}
	}
	known := map[string]bool{}
	for _, p := range props {
		known[p.name] = true
	}
	for _, f := range flags {
		known[f.Arg()] = true
	}
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !known[k] {
			return nil, fmt.Errorf("%s has no argument %q; it takes %s", tool, k, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	return a, nil
}

// str is argument name as a string; "" when absent.
func (a args) str(name string) (string, error) {
	raw, ok := a[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("argument %s must be a string", name)
	}
	return s, nil
}

// required is str for an argument that must be given and not blank.
func (a args) required(tool, name string) (string, error) {
	s, err := a.str(name)
	if err == nil && strings.TrimSpace(s) == "" {
		err = fmt.Errorf("%s needs the argument %s", tool, name)
	}
	return s, err
}

// number is argument name as a number, def when absent.
func (a args) number(name string, def float64) (float64, error) {
	raw, ok := a[name]
	if !ok || string(raw) == "null" {
		return def, nil
	}
	var n float64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("argument %s must be a number", name)
	}
	return n, nil
}

// boolean is argument name as a bool, false when absent.
func (a args) boolean(name string) (bool, error) {
	raw, ok := a[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("argument %s must be true or false", name)
	}
	return b, nil
}

// workspace is the call's workspace: the argument (relative to the
// server's), or the server's.
func (s *server) workspace(a args) (string, error) {
	w, err := a.str("workspace")
	if err != nil || w == "" {
		return s.g.Workspace, err
	}
	if !filepath.IsAbs(w) {
		w = filepath.Join(s.g.Workspace, w)
	}
	return filepath.Clean(w), nil
}

// flagArgs turns the arguments that are flags into command-line
// arguments (--name=value), refusing, unless grub mcp runs with
// --allow-unsafe-options, a flag whose value needs the user's trust.
func (s *server) flagArgs(tool string, a args, flags []Flag) ([]string, error) {
	var out []string
	for _, f := range flags {
		raw, ok := a[f.Arg()]
		if !ok || string(raw) == "null" {
			continue
		}
		values, err := flagValues(f, raw)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %s: %v", tool, f.Arg(), err)
		}
		if why := s.g.NeedsTrust(f.Name, values); why != "" && !s.g.AllowUnsafe {
			return nil, fmt.Errorf("%s: argument %s (--%s) %s; through MCP grub takes it only from your own config file "+
				"(or a trusted .grub/config.toml), or when grub mcp runs with --allow-unsafe-options", tool, f.Arg(), f.Name, why)
		}
		for _, v := range values {
			out = append(out, "--"+f.Name+"="+v)
		}
	}
	return out, nil
}

// flagValues are a flag argument's values in the flag's text form.
func flagValues(f Flag, raw json.RawMessage) ([]string, error) {
	switch f.Type {
	case "bool":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("must be true or false")
		}
		return []string{strconv.FormatBool(b)}, nil
	case "int", "int64", "float64":
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		if f.Type != "float64" {
			if n != math.Trunc(n) {
				return nil, fmt.Errorf("must be a whole number")
			}
			return []string{strconv.FormatInt(int64(n), 10)}, nil
		}
		return []string{strconv.FormatFloat(n, 'f', -1, 64)}, nil
	case "stringArray":
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil {
			var one string
			if json.Unmarshal(raw, &one) != nil {
				return nil, fmt.Errorf("must be a list of strings")
			}
			list = []string{one}
		}
		return list, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("must be a string")
	}
	return []string{v}, nil
}
