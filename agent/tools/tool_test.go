package tools

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAllOrderAndDefinitions(t *testing.T) {
	e := newEnv(t, nil)
	all, err := All(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range all {
		names = append(names, tl.Name())
	}
	want := []string{"shell", "read_file", "write_file", "edit_file", "list_files", "glob", "grep"}
	if !slices.Equal(names, want) {
		t.Fatalf("All names = %v, want %v", names, want)
	}
	again, err := All(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, tl := range all {
		d := tl.Description()
		if d == "" || strings.Contains(d, "{{") || strings.Contains(d, "<no value>") {
			t.Errorf("%s: description not rendered: %q", tl.Name(), d)
		}
		if d != again[i].Description() || string(tl.Parameters()) != string(again[i].Parameters()) {
			t.Errorf("%s: definition differs between two builds", tl.Name())
		}
	}
}

// Every tool's Parameters is a JSON Schema object whose properties are
// the params struct's fields, typed and described, with the non-omitempty
// ones required.
func TestParametersSchema(t *testing.T) {
	e := newEnv(t, nil)
	wantRequired := map[string][]string{
		"shell":      {"command"},
		"read_file":  {"path"},
		"write_file": {"path", "content"},
		"edit_file":  {"path", "old_string", "new_string"},
		"list_files": {},
		"glob":       {"pattern"},
		"grep":       {"pattern"},
	}
	for name, tl := range e.tools {
		var s struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required             []string `json:"required"`
			AdditionalProperties *bool    `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.Parameters(), &s); err != nil {
			t.Errorf("%s: Parameters is not JSON: %v", name, err)
			continue
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: type %q additionalProperties %v, want a closed object", name, s.Type, s.AdditionalProperties)
		}
		if !slices.Equal(s.Required, wantRequired[name]) {
			t.Errorf("%s: required %v, want %v", name, s.Required, wantRequired[name])
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", name, r)
			}
		}
		for p, def := range s.Properties {
			if !slices.Contains([]string{"string", "integer", "boolean", "array"}, def.Type) || def.Description == "" {
				t.Errorf("%s.%s: type %q description %q", name, p, def.Type, def.Description)
			}
		}
	}
}

func TestSchemaFor(t *testing.T) {
	type params struct {
		Name    string   `json:"name" description:"a \"name\""`
		Count   int64    `json:"count,omitempty" description:"how many"`
		Tags    []string `json:"tags" description:"labels"`
		Flag    bool     `json:"flag,omitempty"`
		skipped int
		Ignored string `json:"-"`
	}
	_ = params{}.skipped
	got := string(schemaFor(params{}))
	want := `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"a \"name\""},` +
		`"count":{"type":"integer","description":"how many"},` +
		`"tags":{"type":"array","items":{"type":"string"},"description":"labels"},` +
		`"flag":{"type":"boolean"}},` +
		`"required":["name","tags"],"additionalProperties":false}`
	if got != want {
		t.Errorf("schemaFor:\n%s\nwant:\n%s", got, want)
	}
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		args string
		want string // in the mistake; "" for success
	}{
		{`{"pattern":"x","path":"a"}`, ""},
		{``, `missing required parameter "pattern"`},
		{`null`, `missing required parameter "pattern"`},
		{`{"pattern":null}`, `missing required parameter "pattern"`},
		{`[1]`, "the arguments are not a JSON object"},
		{`{"pattern":"x"`, "the arguments are not a JSON object"},
		{`{"pattern":"x","bogus":1}`, `unknown parameter "bogus"; the parameters are pattern (required), path`},
		{`{"pattern":3}`, `parameter "pattern" must be a JSON string, not number`},
	}
	for _, tc := range tests {
		var p GlobParams
		err := decodeArgs(json.RawMessage(tc.args), &p)
		if tc.want == "" {
			if err != nil || p.Pattern != "x" || p.Path != "a" {
				t.Errorf("decodeArgs(%s) = %+v, %v", tc.args, p, err)
			}
			continue
		}
		var m *mistake
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &m) {
			t.Errorf("decodeArgs(%s) = %v, want a mistake containing %q", tc.args, err, tc.want)
		}
	}
}

func TestAllRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"relative workspace", DefaultConfig("ws", "ws/.grub/x/spill"), "not absolute"},
		{"missing workspace", DefaultConfig(filepath.Join(dir, "nope"), filepath.Join(dir, "nope/.grub/x/spill")), "Config.Workspace"},
		{"no spill folder", Config{Workspace: dir}, "SpillDir"},
		{"relative spill folder", Config{Workspace: dir, SpillDir: "spill"}, "not absolute"},
		{"tiny inline limit", Config{Workspace: dir, SpillDir: dir, InlineLimit: 100}, "below the minimum"},
		{"protected files without a tasks folder", Config{Workspace: dir, SpillDir: dir, Protected: map[string]string{"lock": "no"}}, "Config.TasksDir is empty"},
		{"skipped folders without a tasks folder", Config{Workspace: dir, SpillDir: dir, Skipped: []string{"turns"}}, "Config.TasksDir is empty"},
	}
	for _, tc := range tests {
		if _, err := All(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: All error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A tool built on its own with protected names but no tasks folder fails
// every call instead of protecting nothing.
func TestToolWithoutTasksDirFailsClosed(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig(dir, dir)
	cfg.Protected = map[string]string{"state.json": "off limits"}
	_, err := NewReadFileTool(cfg).Run(context.Background(), json.RawMessage(`{"path":"a.txt"}`))
	if err == nil || !strings.Contains(err.Error(), "Config.TasksDir is empty") {
		t.Errorf("read_file with Protected and no TasksDir: error %v, want a machinery error naming TasksDir", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig("/w", "/w/.grub/0a1b2c3d/spill")
	if c.InlineLimit != 16<<10 || c.ShellTimeout != DefaultShellTimeout || c.MaxGrepMatches != 200 || c.SpillDir != "/w/.grub/0a1b2c3d/spill" {
		t.Errorf("DefaultConfig = %+v", c)
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{30 * time.Second, "30s"},
		{30 * time.Minute, "30m"},
		{90 * time.Minute, "1h30m"},
		{2 * time.Hour, "2h"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Hour + 5*time.Second, "1h0m5s"},
	}
	for _, tc := range tests {
		if got := FormatDuration(tc.in); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
