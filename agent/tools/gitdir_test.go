package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitDirRefused: the file tools run inside grub, past the sandbox's
// read-only mounts, so they refuse every path in a git directory however
// it is spelled (the top one, a nested repository's, through "..", in
// another case, through a link to .git or into it) for reading and
// writing, and nothing is written.
func TestGitDirRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.write(".git/config", "[core]\n\tbare = false\n")
	e.write("lib/.git/config", "[core]\n")
	e.write("src/main.go", "package main\n")
	e.symlink(".git", "gitlink")
	e.symlink(".git/hooks", "hooks")
	if err := os.MkdirAll(filepath.Join(e.ws, ".git/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := "#!/bin/sh\ntouch PLANTED\n"
	paths := []string{
		".git/hooks/pre-commit", "./.git/hooks/pre-commit", "src/../.git/hooks/pre-commit", ".GIT/hooks/pre-commit",
		filepath.Join(e.ws, ".git/hooks/pre-commit"), "gitlink/hooks/pre-commit", "hooks/pre-commit",
		"lib/.git/hooks/pre-commit", ".git/commondir", "lib/.git",
	}
	for _, p := range paths {
		if res := e.run("write_file", map[string]string{"path": p, "content": hook}); !res.IsError || !strings.Contains(res.Text, "git directory") {
			t.Errorf("write_file %s: %q, want a refusal naming the git directory", p, res.Text)
		}
	}
	for _, p := range []string{".git/config", "gitlink/config", "lib/.git/config"} {
		if res := e.run("edit_file", map[string]any{"path": p, "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch PLANTED"}); !res.IsError || !strings.Contains(res.Text, "git directory") {
			t.Errorf("edit_file %s: %q, want a refusal", p, res.Text)
		}
		if res := e.run("read_file", map[string]any{"path": p}); !res.IsError || !strings.Contains(res.Text, "git directory") {
			t.Errorf("read_file %s: %q, want a refusal", p, res.Text)
		}
	}
	if res := e.run("list_files", map[string]any{"path": ".git"}); !res.IsError {
		t.Errorf("list_files .git: %q, want a refusal", res.Text)
	}
	if res := e.run("grep", map[string]any{"pattern": "core", "path": "gitlink"}); !res.IsError {
		t.Errorf("grep in a link to .git: %q, want a refusal", res.Text)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/commondir", "lib/.git/hooks/pre-commit"} {
		if _, err := os.Lstat(filepath.Join(e.ws, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if got := e.read(".git/config"); strings.Contains(got, "fsmonitor") {
		t.Errorf(".git/config was edited: %q", got)
	}
	// Names that only look like it stay usable.
	for _, p := range []string{".gitignore", ".github/workflows/ci.yml", "docs/.gitkeep", ".gitmodules"} {
		if res := e.run("write_file", map[string]string{"path": p, "content": "x\n"}); res.IsError {
			t.Errorf("write_file %s: %q", p, res.Text)
		}
	}
}

// TestHarnessRecordsReadOnly: grub's records that are not secret
// (feature-checklist.md, the progress log's keep link) may be read but not
// written; the agent's own files stay writable.
func TestHarnessRecordsReadOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	dir := ".grub/" + testTaskID
	e.write(dir+"/feature-checklist.md", "- [ ] alpha\n")
	for _, name := range []string{"feature-checklist.md", ".progress-log.keep"} {
		res := e.run("write_file", map[string]string{"path": dir + "/" + name, "content": "all done\n"})
		if !res.IsError || !strings.Contains(res.Text, "grub") {
			t.Errorf("write_file %s: %q, want a refusal", name, res.Text)
		}
	}
	if res := e.run("read_file", map[string]any{"path": dir + "/feature-checklist.md"}); res.IsError {
		t.Errorf("read_file feature-checklist.md: %q", res.Text)
	}
	if got := e.read(dir + "/feature-checklist.md"); got != "- [ ] alpha\n" {
		t.Errorf("feature-checklist.md = %q", got)
	}
	for _, name := range []string{"turns.jsonl", "state.json", "accepted-list.json"} {
		if res := e.run("write_file", map[string]string{"path": dir + "/" + name, "content": "{}\n"}); !res.IsError {
			t.Errorf("write_file %s: %q, want a refusal", name, res.Text)
		}
	}
	for _, name := range []string{"feature-list.json", "init.sh", "progress-log.md"} {
		if res := e.run("write_file", map[string]string{"path": dir + "/" + name, "content": "x\n"}); res.IsError {
			t.Errorf("write_file %s: %q, want it allowed", name, res.Text)
		}
	}
}
