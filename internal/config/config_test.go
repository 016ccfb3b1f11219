package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var testKeys = Keys{
	"model": String, "no-network": Bool, "max-iter": Int, "cost-budget": Float,
	"turn-timeout": Duration, "sandbox-allow": List,
}

func TestParseSettings(t *testing.T) {
	data := `# team defaults
model = "qwen2.5-coder"
no-network = true

max-iter = 40
cost-budget = 12.5
turn-timeout = "45m"
sandbox-allow = ["/srv/cache", "tmp"]
`
	f, err := Parse([]byte(data), ".grub/config.toml", testKeys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{
		{"model", []string{"qwen2.5-coder"}, 2},
		{"no-network", []string{"true"}, 3},
		{"max-iter", []string{"40"}, 5},
		{"cost-budget", []string{"12.5"}, 6},
		{"turn-timeout", []string{"45m"}, 7},
		{"sandbox-allow", []string{"/srv/cache", "tmp"}, 8},
	}
	if len(f.Settings) != len(want) {
		t.Fatalf("settings = %+v", f.Settings)
	}
	for i, w := range want {
		g := f.Settings[i]
		if g.Key != w.Key || g.Line != w.Line || !slices.Equal(g.Values, w.Values) {
			t.Errorf("setting %d = %+v, want %+v", i, g, w)
		}
	}
	if s, ok := f.Lookup("max-iter"); !ok || s.Values[0] != "40" {
		t.Errorf("Lookup(max-iter) = %+v, %v", s, ok)
	}
	if _, ok := f.Lookup("model-x"); ok {
		t.Error("Lookup found a key the file lacks")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
		key        string
		in         []string // parts of the message
	}{
		{"unknown key", "model = \"m\"\nmax-iters = 3\n", 2, "max-iters", []string{"unknown key", "did you mean max-iter?"}},
		{"unknown key far from all", "colour = \"red\"\n", 1, "colour", []string{"unknown key: keys are the long flags"}},
		{"string for a number", "\n\nmax-iter = \"ten\"\n", 3, "max-iter", []string{"expected an integer", `got the string "ten"`}},
		{"number for a duration", "turn-timeout = 45\n", 1, "turn-timeout", []string{"expected a duration in quotes", "got the integer 45"}},
		{"string for a boolean", "no-network = \"yes\"\n", 1, "no-network", []string{"expected true or false"}},
		{"string for a list", "sandbox-allow = \"/srv\"\n", 1, "sandbox-allow", []string{"expected an array of strings"}},
		{"number in a list", "sandbox-allow = [\"/srv\", 3]\n", 1, "sandbox-allow", []string{"expected an array of strings", "got an array"}},
		{"float for an int", "max-iter = 4.5\n", 1, "max-iter", []string{"expected an integer", "got the number 4.5"}},
		{"a table", "model = \"m\"\n[agent]\nmodel = \"x\"\n", 2, "[agent]", []string{"tables are not used"}},
		{"dotted key", "agent.model = \"x\"\n", 1, "agent.model", []string{"unknown key"}},
		{"not TOML", "model = \"m\"\nmax-iter: 40\n", 2, "", []string{"not valid TOML"}},
		{"duplicate key", "model = \"a\"\nmodel = \"b\"\n", 2, "", []string{"not valid TOML"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data), "cfg.toml", testKeys)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.File != "cfg.toml" || e.Line != tc.line || e.Key != tc.key {
				t.Errorf("error at %s:%d key %q, want line %d key %q: %v", e.File, e.Line, e.Key, tc.line, tc.key, err)
			}
			for _, part := range tc.in {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("%q lacks %q", err, part)
				}
			}
			if !strings.HasPrefix(err.Error(), "cfg.toml:") {
				t.Errorf("%q does not start with the file", err)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	f, err := Load(filepath.Join(dir, "missing.toml"), "missing.toml", testKeys)
	if f != nil || err != nil {
		t.Errorf("missing file: %v, %v", f, err)
	}
	if _, err := Load(dir, "dir.toml", testKeys); err == nil || !strings.HasPrefix(err.Error(), "dir.toml: cannot read it") {
		t.Errorf("a folder: %v", err)
	}
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("max-iter = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Load(path, "c.toml", testKeys)
	if err != nil || f.Name != "c.toml" || len(f.Settings) != 1 {
		t.Errorf("Load = %+v, %v", f, err)
	}
}

func TestUserFile(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env        map[string]string
		path, name string
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.config/grub/config.toml", "~/.config/grub/config.toml"},
		{map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/cfg"}, "/home/u/cfg/grub/config.toml", "~/cfg/grub/config.toml"},
		{map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/etc/x"}, "/etc/x/grub/config.toml", "/etc/x/grub/config.toml"},
		{map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "rel"}, "/home/u/.config/grub/config.toml", "~/.config/grub/config.toml"},
		{map[string]string{}, "", ""},
	} {
		path, name := UserFile(env(tc.env))
		if path != tc.path || name != tc.name {
			t.Errorf("UserFile(%v) = %q, %q; want %q, %q", tc.env, path, name, tc.path, tc.name)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("model = \"m\"\nmax-iter = 3\n[t]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data, "f", testKeys)
		if err == nil && file == nil {
			t.Fatal("no file and no error")
		}
	})
}
