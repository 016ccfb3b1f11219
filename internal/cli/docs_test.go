package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docCommands lists the commands the reference covers (every command but
// the hidden ones and help), by their path with dashes: grub, grub-start, …
func docCommands(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	out := map[string]*cobra.Command{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		out[strings.ReplaceAll(c.CommandPath(), " ", "-")] = c
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(docsRoot(false))
	if len(out) < 15 {
		t.Fatalf("only %d commands in the tree: %v", len(out), out)
	}
	return out
}

// TestCLIDocsUpToDate keeps docs/cli in step with the commands: it writes
// the reference afresh and compares it with the committed one, file by
// file.
func TestCLIDocsUpToDate(t *testing.T) {
	fresh := t.TempDir()
	if err := WriteDocs(fresh); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "docs", "cli")
	want := mdFiles(t, fresh)
	have := mdFiles(t, committed)
	for name, data := range want {
		old, ok := have[name]
		switch {
		case !ok:
			t.Errorf("docs/cli/%s is missing: run make docs and commit docs/cli", name)
		case !bytes.Equal(old, data):
			t.Errorf("docs/cli/%s is stale (the command's help changed): run make docs and commit docs/cli", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s is of no command: run make docs (it removes it) and commit docs/cli", name)
		}
	}
	for path := range docCommands(t) {
		if _, ok := want[strings.ReplaceAll(path, "-", "_")+".md"]; !ok {
			t.Errorf("no page for %s", path)
		}
	}
}

func mdFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = data
		}
	}
	return out
}

// TestDocsLeaveOutHiddenCommands: the pages are of the commands a user
// types; grub's hidden ones (the demo's agent, the sandbox launcher) have
// none, and no page names them.
func TestDocsLeaveOutHiddenCommands(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDocs(dir); err != nil {
		t.Fatal(err)
	}
	if err := WriteMan(dir); err != nil {
		t.Fatal(err)
	}
	var hidden []string
	for _, c := range docsRoot(false).Commands() {
		if c.Hidden {
			hidden = append(hidden, c.Name())
		}
	}
	if len(hidden) < 2 {
		t.Fatalf("expected the hidden commands (demo-agent, the sandbox launcher), got %v", hidden)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		for _, h := range hidden {
			if strings.Contains(e.Name(), h) || strings.Contains(string(data), "grub "+h) {
				t.Errorf("%s names the hidden command %s", e.Name(), h)
			}
		}
	}
}

// TestManPages: make man writes a page for every command, each a man page
// of section 1 with its name line, and the help's text reaches it whole
// (Markdown would drop "<id>" as a tag).
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if err := WriteMan(dir); err != nil {
		t.Fatal(err)
	}
	for path, c := range docCommands(t) {
		data, err := os.ReadFile(filepath.Join(dir, path+".1"))
		if err != nil {
			t.Errorf("no man page for %s: %v", path, err)
			continue
		}
		page := string(data)
		if !strings.Contains(page, `.TH "GRUB" "1"`) {
			t.Errorf("%s.1 has no section 1 header:\n%.200s", path, page)
		}
		if !strings.Contains(page, path+" - "+c.Short) {
			t.Errorf("%s.1 lacks its name line %q", path, path+" - "+c.Short)
		}
	}
	start, err := os.ReadFile(filepath.Join(dir, "grub-start.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.grub/<id>/`, `<loop-state> decision`, `("<goal>" | --goal-file FILE) [flags]`, `'**/*_test.go'`} {
		if !strings.Contains(string(start), want) {
			t.Errorf("grub-start.1 lost %q", want)
		}
	}
}
