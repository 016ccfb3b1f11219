package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReadWorkspaceFile: grub's own read of a workspace file (AGENTS.md for
// the turn context) gets read_file's confinement: what is missing is not
// found, links out of the workspace, into .git or to a protected harness
// file are refused, not read, and a link that stays inside is followed.
func TestReadWorkspaceFile(t *testing.T) {
	e := newEnv(t, nil)
	e.write("AGENTS.md", "Run make test.\n")
	e.write("docs/agents.md", "Use tabs.\n")
	e.write(".git/config", "[core]\n")
	e.write(".grub/"+testTaskID+"/state.json", "{}\n")
	e.symlink(filepath.Join(e.outside, "secret.txt"), "OUT.md")
	e.symlink("docs/agents.md", "INSIDE.md")
	e.symlink(".git/config", "GIT.md")
	e.symlink(".grub/"+testTaskID+"/state.json", "STATE.md")
	e.symlink("nowhere.md", "DANGLING.md")
	e.symlink(filepath.Join(e.outside, "nowhere.md"), "DANGLING_OUT.md")
	if err := os.Mkdir(filepath.Join(e.ws, "DIR.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("BIN.md", "a\x00b")

	tests := []struct {
		name       string
		found      bool
		text       string
		refusedHas string
	}{
		{"AGENTS.md", true, "Run make test.\n", ""},
		{"MISSING.md", false, "", ""},
		{"INSIDE.md", true, "Use tabs.\n", ""},
		{"DANGLING.md", false, "", ""},
		{"OUT.md", true, "", "outside the workspace"},
		{"DANGLING_OUT.md", true, "", "outside the workspace"},
		{"GIT.md", true, "", "git directory"},
		{"STATE.md", true, "", "written only by grub"},
		{"DIR.md", true, "", "is a folder"},
		{"BIN.md", true, "", "binary"},
		{"../outside/secret.txt", true, "", "leaves the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ReadWorkspaceFile(e.cfg, tt.name, 1024)
			if err != nil {
				t.Fatalf("error %v, want an answer", err)
			}
			if f.Found != tt.found || f.Text != tt.text || f.Cut {
				t.Errorf("got %+v, want found %v, text %q", f, tt.found, tt.text)
			}
			if tt.refusedHas == "" && f.Refused != "" || !strings.Contains(f.Refused, tt.refusedHas) {
				t.Errorf("refused = %q, want it to say %q", f.Refused, tt.refusedHas)
			}
			if strings.Contains(f.Text, "secret") {
				t.Errorf("read the secret outside the workspace: %+v", f)
			}
		})
	}

	cfg := e.cfg
	cfg.Workspace = filepath.Join(e.ws, "gone")
	if _, err := ReadWorkspaceFile(cfg, "AGENTS.md", 1024); err == nil {
		t.Error("a workspace that does not exist gave no error")
	}
}

// TestReadWorkspaceFileCut: a file over the limit is cut at a UTF-8
// boundary, its whole size given.
func TestReadWorkspaceFileCut(t *testing.T) {
	e := newEnv(t, nil)
	text := strings.Repeat("a", 9) + strings.Repeat("é", 10) // 'é' is two bytes: byte 10 splits one
	e.write("AGENTS.md", text)
	f, err := ReadWorkspaceFile(e.cfg, "AGENTS.md", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Cut || f.Size != int64(len(text)) || f.Text != strings.Repeat("a", 9) || !utf8.ValidString(f.Text) {
		t.Errorf("got %+v, want 9 bytes, cut, of %d", f, len(text))
	}
	f, err = ReadWorkspaceFile(e.cfg, "AGENTS.md", len(text))
	if err != nil || f.Cut || f.Text != text {
		t.Errorf("at the exact size: %+v, %v; want it whole", f, err)
	}
}
