package gitx

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/harness"
)

// blobAt is the content HEAD's tree holds at path, read by the git program.
func blobAt(t *testing.T, run func(string, ...string) string, dir, path string) string {
	t.Helper()
	return run(dir, "cat-file", "blob", "HEAD:"+path)
}

// twinCommit makes the same files in a second repository set up by setup,
// commits them with `git add -A && git commit`, and returns its HEAD tree.
func twinTree(t *testing.T, run func(string, ...string) string, setup func(dir string), files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run(dir, "init", "-q")
	setup(dir)
	write(t, dir, files)
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "-m", "twin")
	return strings.TrimSpace(run(dir, "rev-parse", "HEAD^{tree}"))
}

// convertCase is one repository that asks git to convert files, with the
// files a turn writes and what its commit must hold.
type convertCase struct {
	name  string
	setup func(t *testing.T, run func(string, ...string) string, dir string)
	files map[string]string
	want  map[string]string // path → committed blob
}

func convertCases() []convertCase {
	crlf := map[string]string{"a.txt": "one\r\ntwo\r\n", "sub/b.md": "x\r\n", "plain.bin": "\x00\r\n"}
	return []convertCase{{
		name: "text=auto eol=crlf",
		setup: func(t *testing.T, _ func(string, ...string) string, dir string) {
			write(t, dir, map[string]string{".gitattributes": "* text=auto eol=crlf\n"})
		},
		files: crlf,
		want:  map[string]string{"a.txt": "one\ntwo\n", "sub/b.md": "x\n", "plain.bin": "\x00\r\n"},
	}, {
		name: "core.autocrlf=true",
		setup: func(t *testing.T, run func(string, ...string) string, dir string) {
			run(dir, "config", "core.autocrlf", "true")
		},
		files: crlf,
		want:  map[string]string{"a.txt": "one\ntwo\n", "sub/b.md": "x\n", "plain.bin": "\x00\r\n"},
	}, {
		name: "clean filter in a nested .gitattributes",
		setup: func(t *testing.T, run func(string, ...string) string, dir string) {
			script := filepath.Join(dir, ".git", "upper.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf 'CLEANED '\ntr a-z A-Z\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			run(dir, "config", "filter.upper.clean", script)
			run(dir, "config", "filter.upper.smudge", "cat")
			write(t, dir, map[string]string{"deep/.gitattributes": "*.txt filter=upper\n", ".gitattributes": "*.json filter=upper\n"})
		},
		files: map[string]string{"deep/x.txt": "hello\n", "x.txt": "top\n", "deep/y.md": "kept\n",
			// a name git must get quoted on its standard input
			"deep/odd \"name\"\n.txt": "odd\n"},
		want: map[string]string{"deep/x.txt": "CLEANED HELLO\n", "x.txt": "top\n", "deep/y.md": "kept\n",
			"deep/odd \"name\"\n.txt": "CLEANED ODD\n"},
	}}
}

// TestCommitConvertsAsGit: where the attributes or the config ask git
// to convert files (end of line, a clean filter), grub's commit holds
// the blobs `git add` would store, the same tree as git's own commit of
// the same files, and git sees a clean work tree afterwards; grub's own
// files under .grub are committed as grub wrote them, so that the turn's
// commit is still recognised by its state.json.
func TestCommitConvertsAsGit(t *testing.T) {
	run := gitBin(t)
	for _, c := range convertCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			run(dir, "init", "-q")
			c.setup(t, run, dir)
			r := mustOpen(t, dir).WithHarness(HarnessFiles{Dir: ".grub", Tracked: []string{"state.json"}})
			if got, err := r.Conversion(); err != nil || len(got) == 0 {
				t.Fatalf("Conversion() = %q, %v; want the reason", got, err)
			}
			if _, err := r.InitialCommit(context.Background(), "initial"); err != nil {
				t.Fatal(err)
			}
			state := "{\"id\": \"ab12cd34\", \"lines\": \"kept\"}\r\n"
			// grub's .grub/.gitattributes (harness.Store writes it) tells
			// git that grub's files are not converted.
			files := map[string]string{".grub/ab12cd34/state.json": state, ".grub/.gitattributes": harness.Gitattributes}
			for k, v := range c.files {
				files[k] = v
			}
			write(t, dir, files)
			mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "convert", Status: "running"})
			for path, want := range c.want {
				if got := blobAt(t, run, dir, path); got != want {
					t.Errorf("committed %q = %q, want %q (as git add stores it)", path, got, want)
				}
			}
			if got := blobAt(t, run, dir, ".grub/ab12cd34/state.json"); got != state {
				t.Errorf("state.json committed as %q, want it as grub wrote it", got)
			}
			if st := run(dir, "status", "--porcelain"); st != "" {
				t.Errorf("git status after grub's commit:\n%s", st)
			}
			ok, err := r.TurnCommittedBy("ab12cd34", 1, ".grub/ab12cd34/state.json", func(b []byte) bool { return string(b) == state })
			if err != nil || !ok {
				t.Errorf("TurnCommittedBy = %v, %v; want grub's own commit recognised", ok, err)
			}
			if h, err := r.History("ab12cd34"); err != nil || len(h) != 1 {
				t.Errorf("History = %v, %v; want the turn", h, err)
			}
			// The same files committed by git itself: the same tree,
			// grub's folder aside.
			delete(files, ".grub/ab12cd34/state.json")
			delete(files, ".grub/.gitattributes")
			twin := twinTree(t, run, func(d string) { c.setup(t, run, d) }, files)
			mine := strings.TrimSpace(run(dir, "rev-parse", "HEAD^{tree}"))
			if theirs := strings.TrimSpace(run(dir, "rev-parse", "HEAD~1^{tree}")); mine == theirs {
				t.Fatal("the turn's commit has the initial commit's tree")
			}
			run(dir, "rm", "-q", "-r", "--cached", ".grub")
			run(dir, "commit", "-q", "-m", "without .grub")
			if mine = strings.TrimSpace(run(dir, "rev-parse", "HEAD^{tree}")); mine != twin {
				t.Errorf("grub's tree %s, git's %s for the same files:\n%s", mine, twin, run(dir, "ls-tree", "-r", "HEAD"))
			}
		})
	}
}

// TestChangeTokenAfterConvertedCommit: the change token hashes files as
// the commit does, so that a turn that changes nothing after a turn whose
// files git converted has the same token before and after.
func TestChangeTokenAfterConvertedCommit(t *testing.T) {
	run := gitBin(t)
	dir := t.TempDir()
	run(dir, "init", "-q")
	write(t, dir, map[string]string{".gitattributes": "*.txt text eol=crlf\n"})
	r := mustOpen(t, dir)
	if _, err := r.InitialCommit(context.Background(), "initial"); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "one\r\n"})
	before, err := r.TreeHash()
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	after, err := r.TreeHash()
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("token %s before the commit, %s after it: the same work tree", before, after)
	}
	if d, err := r.Dirty(); err != nil || len(d) != 0 {
		t.Errorf("Dirty() = %v, %v after the commit", d, err)
	}
}

// fakeGitOnPath puts, first on PATH, a git that logs each run's
// arguments to the returned file and then runs the real git.
func fakeGitOnPath(t *testing.T) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("the git binary is not installed")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "runs.log")
	script := "#!/bin/sh\necho \"$@\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

// TestPlainRepositoryNeverRunsGit: a repository whose attributes ask for
// no conversion (binary and -text only, core.autocrlf false) is committed
// without the git program, as before; one that asks for it runs git
// hash-object, and without git the commit says what to do.
func TestPlainRepositoryNeverRunsGit(t *testing.T) {
	log := fakeGitOnPath(t)
	dir, r := committedRepo(t, map[string]string{".gitattributes": "*.png binary\n*.dat -text !eol\n", "a.txt": "a\r\n"})
	write(t, dir, map[string]string{"a.txt": "b\r\n", "c.png": "\x89PNG\r\n"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if _, err := r.TreeHash(); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Conversion(); err != nil || len(got) != 0 {
		t.Errorf("Conversion() = %q, %v; want none", got, err)
	}
	if data, err := os.ReadFile(log); err == nil {
		t.Fatalf("a repository without conversion ran git:\n%s", data)
	}
	if got := headFiles(t, dir)["a.txt"]; got != "b\r\n" {
		t.Errorf("a.txt committed as %q, want it as on disk", got)
	}

	write(t, dir, map[string]string{"sub/.gitattributes": "*.txt text\n", "sub/d.txt": "d\r\n", "a.txt": "c\r\n"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 2, Status: "running"})
	data, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(data), "hash-object -w --stdin-paths") {
		t.Fatalf("a repository with a text attribute: git ran %q (%v), want hash-object", data, err)
	}
	if got := headFiles(t, dir); got["sub/d.txt"] != "d\n" || got["a.txt"] != "c\r\n" {
		t.Errorf("committed %q and %q, want sub/d.txt normalised and a.txt as on disk", got["sub/d.txt"], got["a.txt"])
	}

	t.Setenv("PATH", t.TempDir())
	write(t, dir, map[string]string{"sub/d.txt": "e\r\n"})
	_, err = r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 3, Status: "running"})
	if !errors.Is(err, ErrNoGitProgram) || !strings.Contains(err.Error(), "sub/.gitattributes: *.txt text") || !strings.Contains(err.Error(), "--no-commit") {
		t.Errorf("commit without git: %v; want ErrNoGitProgram naming the attribute and --no-commit", err)
	}
	if _, err := r.TreeHash(); err != nil {
		t.Errorf("TreeHash without git: %v; want the token of the files as on disk", err)
	}
}

// TestConversionReasons: the attributes that convert and those that do
// not, in every file git reads them from.
func TestConversionReasons(t *testing.T) {
	for tok, want := range map[string]bool{
		"text": true, "text=auto": true, "-text": false, "!text": false, "eol=lf": true, "crlf": true,
		"-crlf": false, "crlf=input": true, "filter=lfs": true, "-filter": false, "ident": true,
		"working-tree-encoding=UTF-16": true, "binary": false, "diff=lfs": false, "merge=lfs": false,
	} {
		if got := convertingAttr(tok); got != want {
			t.Errorf("convertingAttr(%q) = %v, want %v", tok, got, want)
		}
	}
	if got := attrLines("a", []byte("\"text file\" -diff\n# *.c text\n[attr]conv text\n")); len(got) != 1 || got[0] != "a: [attr]conv text" {
		t.Errorf("attrLines = %q, want the macro line only", got)
	}
	dir := initRepo(t)
	other := t.TempDir()
	write(t, dir, map[string]string{".git/info/attributes": "*.x ident\n", "work/.gitattributes": "*.y eol=crlf\n"})
	global := filepath.Join(other, "attrs")
	write(t, other, map[string]string{"attrs": "*.z filter=lfs\n"})
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n\tautocrlf = input\n\tattributesFile = "+global+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{".gitattributes": "*.w text\n"})
	got, err := mustOpen(t, filepath.Join(dir, "work")).Conversion()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"core.autocrlf=input", ".git/info/attributes: *.x ident", global + ": *.z filter=lfs", ".gitattributes: *.w text", "work/.gitattributes: *.y eol=crlf"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Conversion() =\n%q\nwant\n%q", got, want)
	}
}

func TestCQuote(t *testing.T) {
	if got := cQuote("a \"b\"\\\n\x7fé"); got != `"a \"b\"\\\012\177é"` {
		t.Errorf("cQuote = %s", got)
	}
}
