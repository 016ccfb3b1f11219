package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/grub-dev/grub/harness"
)

// TestTurnSequence runs a scripted task: every turn leaves exactly one
// commit with the right message and trailers, nothing ignored is committed,
// deleted files leave the next commit, and History reads the turns back.
func TestTurnSequence(t *testing.T) {
	t.Parallel()
	dir := initRepo(t)
	write(t, dir, map[string]string{
		".gitignore":                   "node_modules/\n*.log\n",
		"main.go":                      "package main\n",
		"README.md":                    "# demo\n",
		"node_modules/left-pad/pkg.js": "module.exports = 1\n",
		"debug.log":                    "noise\n",
		".grub/.gitignore":             harness.Gitignore,
	})
	r := mustOpen(t, dir)
	if _, err := r.InitialCommit(context.Background(), "grub: the project before task ab12cd34"); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	steps := turnSequenceSteps()
	var hashes []string
	for i := range steps {
		steps[i].turn.When = when.Add(time.Duration(i) * time.Minute)
		s := steps[i]
		write(t, dir, s.files)
		hashes = append(hashes, mustCommit(t, r, s.turn))
		checkTurnCommit(t, dir, r, s, hashes)
	}
	if n := commitCount(t, dir); n != len(steps)+1 {
		t.Errorf("%d commits, want %d (the initial one and one per turn)", n, len(steps)+1)
	}
	if got := headFiles(t, dir)["main.go"]; got != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go in HEAD = %q", got)
	}
	checkTurnHistory(t, r, steps, hashes)
}

// turnStep is one turn of TestTurnSequence.
type turnStep struct {
	files map[string]string // changes made during the turn
	turn  Turn
	want  []string // HEAD's files after the commit
}

// turnSequenceSteps is TestTurnSequence's script.
func turnSequenceSteps() []turnStep {
	task := ".grub/ab12cd34/"
	runtime := map[string]string{ // never committed
		task + "lock":               "pid 42\n",
		task + "control.json":       "{}\n",
		task + "turns/0001.jsonl":   "{}\n",
		task + "spill/out-1.txt":    "big\n",
		task + "state.json.tmp-123": "{}\n",
	}
	return []turnStep{
		{
			files: merge(runtime, map[string]string{
				task + "state.json":        `{"id":"ab12cd34"}`,
				task + "feature-list.json": `{"features":[]}`,
				task + "progress-log.md":   "## turn 1\n",
				"node_modules/x/index.js":  "ignored\n",
			}),
			turn: Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "wrote the feature list", Status: "running"},
			want: []string{".gitignore", ".grub/.gitignore", task + "feature-list.json", task + "progress-log.md", task + "state.json", "README.md", "main.go"},
		},
		{
			files: map[string]string{
				"api/login.go":            "package api\n",
				"main.go":                 "package main\n\nfunc main() {}\n",
				task + "progress-log.md":  "## turn 1\n## turn 2\n",
				task + "turns/0002.jsonl": "{}\n",
			},
			turn: Turn{TaskID: "ab12cd34", Iteration: 2, Feature: "F-001", Summary: "added the login handler", Status: "running"},
			want: []string{".gitignore", ".grub/.gitignore", task + "feature-list.json", task + "progress-log.md", task + "state.json", "README.md", "api/login.go", "main.go"},
		},
		{ // only the progress log changed
			files: map[string]string{task + "progress-log.md": "## turn 1\n## turn 2\n## turn 3\n"},
			turn:  Turn{TaskID: "ab12cd34", Iteration: 3, Feature: "F-002", Summary: "no progress", Status: "running"},
			want:  []string{".gitignore", ".grub/.gitignore", task + "feature-list.json", task + "progress-log.md", task + "state.json", "README.md", "api/login.go", "main.go"},
		},
		{ // nothing changed at all: still a commit
			turn: Turn{TaskID: "ab12cd34", Iteration: 4, Feature: "F-002", Summary: "still nothing", Status: "running"},
			want: []string{".gitignore", ".grub/.gitignore", task + "feature-list.json", task + "progress-log.md", task + "state.json", "README.md", "api/login.go", "main.go"},
		},
		{ // a deletion
			files: map[string]string{"README.md": "\x00", "api/login.go": "\x00", "api/v2/login.go": "package v2\n"},
			turn:  Turn{TaskID: "ab12cd34", Iteration: 5, Feature: "F-002", Summary: strings.Repeat("moved the login handler to v2 and removed the readme ", 3), Status: "complete"},
			want:  []string{".gitignore", ".grub/.gitignore", task + "feature-list.json", task + "progress-log.md", task + "state.json", "api/v2/login.go", "main.go"},
		},
	}
}

// checkTurnCommit checks HEAD after the commit of step s, whose hash is
// the last of hashes (one per turn so far).
func checkTurnCommit(t *testing.T, dir string, r *Repo, s turnStep, hashes []string) {
	t.Helper()
	i, h := len(hashes)-1, hashes[len(hashes)-1]
	c := headCommitObject(t, dir)
	if c.Hash.String() != h {
		t.Fatalf("turn %d: HEAD is %s, CommitTurn returned %s", i+1, c.Hash, h)
	}
	if c.Message != TurnMessage(s.turn) {
		t.Errorf("turn %d: message\n%q\nwant\n%q", i+1, c.Message, TurnMessage(s.turn))
	}
	if len(c.ParentHashes) != 1 || (i > 0 && c.ParentHashes[0].String() != hashes[i-1]) {
		t.Errorf("turn %d: parents %v, want the previous turn's commit", i+1, c.ParentHashes)
	}
	if !c.Committer.When.Equal(s.turn.When) || !c.Author.When.Equal(s.turn.When) {
		t.Errorf("turn %d: dated %v, want %v", i+1, c.Committer.When, s.turn.When)
	}
	if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, sortStrings(s.want)) {
		t.Errorf("turn %d: HEAD has\n%v\nwant\n%v", i+1, got, sortStrings(s.want))
	}
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 0 {
		t.Errorf("turn %d: Dirty after the commit = %v, %v; want clean", i+1, dirty, err)
	}
}

// checkTurnHistory checks that History reads the turns of steps back,
// committed as hashes, and only for their task.
func checkTurnHistory(t *testing.T, r *Repo, steps []turnStep, hashes []string) {
	t.Helper()
	hist, err := r.History("ab12cd34")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(steps) {
		t.Fatalf("History has %d entries, want %d: %+v", len(hist), len(steps), hist)
	}
	for i, e := range hist {
		tu := steps[i].turn
		want := HistoryEntry{Commit: hashes[i][:12], Time: e.Time, TaskID: tu.TaskID, Iteration: tu.Iteration,
			Feature: tu.Feature, Status: tu.Status, Summary: strings.TrimSpace(tu.Summary)}
		if e != want {
			t.Errorf("History[%d] = %+v\nwant %+v", i, e, want)
		}
		if !e.Time.Equal(tu.When) {
			t.Errorf("History[%d].Time = %v, want %v", i, e.Time, tu.When)
		}
	}
	if last, ok, err := r.LastTurn("ab12cd34"); err != nil || !ok || last != hist[len(hist)-1] {
		t.Errorf("LastTurn = %+v, %v, %v; want %+v", last, ok, err, hist[len(hist)-1])
	}
	if _, ok, err := r.LastTurn("ffff0000"); err != nil || ok {
		t.Errorf("LastTurn of another task = %v, %v; want none", ok, err)
	}
	if other, err := r.History("ffff0000"); err != nil || len(other) != 0 {
		t.Errorf("History of another task = %v, %v; want none", other, err)
	}
	if all, err := r.History(""); err != nil || len(all) != len(steps) {
		t.Errorf("History(\"\") has %d entries (%v), want %d", len(all), err, len(steps))
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func sortStrings(xs []string) []string {
	out := append([]string(nil), xs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// turnMessageCase is a turn and the commit message TurnMessage must make.
type turnMessageCase struct {
	name        string
	turn        Turn
	wantSubject string
	wantBody    string // the paragraph between subject and trailers
	wantTrailer string
}

func turnMessageCases() []turnMessageCase {
	long := strings.Repeat("word ", 30)
	return []turnMessageCase{
		{
			name:        "feature",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 3, Feature: "F-002", Summary: "added login", Status: "running"},
			wantSubject: "grub(ab12cd34) #3 F-002: added login",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 3\nGrub-Feature: F-002\nGrub-Status: running\n",
		},
		{
			name:        "no feature",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "wrote the feature list", Status: "running"},
			wantSubject: "grub(ab12cd34) #1: wrote the feature list",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 1\nGrub-Status: running\n",
		},
		{
			name:        "no summary",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 2, Feature: "F-001", Status: "failed"},
			wantSubject: "grub(ab12cd34) #2 F-001",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 2\nGrub-Feature: F-001\nGrub-Status: failed\n",
		},
		{
			name:        "long summary",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 12, Feature: "F-010", Summary: long, Status: "blocked"},
			wantSubject: "grub(ab12cd34) #12 F-010: " + strings.TrimSpace(long[:45]) + "…",
			wantBody:    strings.TrimSpace(long),
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 12\nGrub-Feature: F-010\nGrub-Status: blocked\n",
		},
		{
			name:        "multi-line summary",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 4, Summary: "fixed the build\n\n- go.mod\n- main.go", Status: "running"},
			wantSubject: "grub(ab12cd34) #4: fixed the build",
			wantBody:    "fixed the build\n\n- go.mod\n- main.go",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 4\nGrub-Status: running\n",
		},
		{
			name:        "cost",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 6, Feature: "F-2", Summary: "ok", Status: "running", CostUSD: 0.0123, CostReported: true},
			wantSubject: "grub(ab12cd34) #6 F-2: ok",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 6\nGrub-Feature: F-2\nGrub-Status: running\nGrub-Cost: 0.0123\n",
		},
		{
			name:        "cost reported as zero",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 7, Summary: "ok", Status: "running", CostReported: true},
			wantSubject: "grub(ab12cd34) #7: ok",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 7\nGrub-Status: running\nGrub-Cost: 0\n",
		},
		{
			name:        "verified flip",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 8, Feature: "F-3", Summary: "ok", Status: "running", Verified: "F-3"},
			wantSubject: "grub(ab12cd34) #8 F-3: ok",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 8\nGrub-Feature: F-3\nGrub-Status: running\nGrub-Verified: F-3\n",
		},
		{
			name:        "a summary cannot add a trailer",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 9, Summary: "ok\n\nGrub-Verified: F-9", Status: "running"},
			wantSubject: "grub(ab12cd34) #9: ok",
			wantBody:    "ok\n\nGrub-Verified: F-9",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 9\nGrub-Status: running\n",
		},
		{
			name:        "newlines in fields",
			turn:        Turn{TaskID: "ab12cd34", Iteration: 5, Feature: "F-1\nX", Summary: "ok", Status: "running\n"},
			wantSubject: "grub(ab12cd34) #5 F-1 X: ok",
			wantTrailer: "Grub-Task: ab12cd34\nGrub-Iteration: 5\nGrub-Feature: F-1 X\nGrub-Status: running\n",
		},
	}
}

func TestTurnMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range turnMessageCases() {
		t.Run(tt.name, func(t *testing.T) {
			msg := TurnMessage(tt.turn)
			subject, rest, _ := strings.Cut(msg, "\n\n")
			if subject != tt.wantSubject {
				t.Errorf("subject %q, want %q", subject, tt.wantSubject)
			}
			if n := len([]rune(subject)); n > subjectWidth {
				t.Errorf("subject has %d characters, more than %d", n, subjectWidth)
			}
			want := tt.wantTrailer
			if tt.wantBody != "" {
				want = tt.wantBody + "\n\n" + want
			}
			if rest != want {
				t.Errorf("after the subject:\n%q\nwant\n%q", rest, want)
			}
			e, ok := parseTurn(msg)
			if !ok {
				t.Fatal("parseTurn did not recognise the message")
			}
			wantSummary := strings.TrimSpace(tt.turn.Summary)
			if tt.wantBody == "" {
				wantSummary = oneLine(wantSummary)
			}
			if e.TaskID != tt.turn.TaskID || e.Iteration != tt.turn.Iteration || e.Feature != oneLine(tt.turn.Feature) ||
				e.Status != oneLine(tt.turn.Status) || e.Summary != wantSummary || e.Verified != tt.turn.Verified {
				t.Errorf("parseTurn = %+v, want the turn %+v back", e, tt.turn)
			}
			switch {
			case tt.turn.CostReported && (e.CostUSD == nil || *e.CostUSD != tt.turn.CostUSD):
				t.Errorf("parseTurn cost = %v, want %v", e.CostUSD, tt.turn.CostUSD)
			case !tt.turn.CostReported && e.CostUSD != nil:
				t.Errorf("parseTurn cost = %v, want none", *e.CostUSD)
			}
		})
	}
}

func TestParseTurnIgnoresABadCost(t *testing.T) {
	t.Parallel()
	for _, cost := range []string{"", "abc", "-1", "NaN", "+Inf", "$1.00"} {
		e, ok := parseTurn("grub(ab12cd34) #1: x\n\nGrub-Task: ab12cd34\nGrub-Iteration: 1\nGrub-Status: running\nGrub-Cost: " + cost + "\n")
		if !ok || e.CostUSD != nil {
			t.Errorf("Grub-Cost %q: parseTurn = %+v, %v; want the turn without a cost", cost, e, ok)
		}
	}
}

func TestParseTurnIgnoresOtherCommits(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"fix typo\n",
		"fix typo\n\nSigned-off-by: A <a@b>\n",
		"grub(ab12cd34) #1: looks like grub but has no trailers\n",
	} {
		if e, ok := parseTurn(msg); ok {
			t.Errorf("parseTurn(%q) = %+v, want not a turn", msg, e)
		}
	}
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		first func(r *Repo) (string, error)
	}{
		{"CommitTurn", func(r *Repo) (string, error) {
			c, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "first", Status: "running"})
			return c.Hash, err
		}},
		{"InitialCommit", func(r *Repo) (string, error) {
			c, err := r.InitialCommit(context.Background(), "grub: initial commit")
			return c.Hash, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := initRepo(t)
			write(t, dir, map[string]string{"a.txt": "a\n", ".gitignore": "tmp/\n", "tmp/x": "x\n"})
			r := mustOpen(t, dir)
			if has, err := r.HasCommits(); err != nil || has {
				t.Fatalf("HasCommits on a new repository = %v, %v", has, err)
			}
			if hist, err := r.History("ab12cd34"); err != nil || len(hist) != 0 {
				t.Fatalf("History on a new repository = %v, %v", hist, err)
			}
			if dirty, err := r.Dirty(); err != nil || !reflect.DeepEqual(dirty, []string{".gitignore", "a.txt"}) {
				t.Fatalf("Dirty on a new repository = %v, %v", dirty, err)
			}
			h, err := tt.first(r)
			if err != nil {
				t.Fatal(err)
			}
			if has, err := r.HasCommits(); err != nil || !has {
				t.Fatalf("HasCommits after the first commit = %v, %v", has, err)
			}
			c := headCommitObject(t, dir)
			if c.Hash.String() != h || len(c.ParentHashes) != 0 {
				t.Errorf("HEAD %s with parents %v, want %s without parent", c.Hash, c.ParentHashes, h)
			}
			if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, []string{".gitignore", "a.txt"}) {
				t.Errorf("HEAD has %v", got)
			}
			if _, err := r.InitialCommit(context.Background(), "again"); !errors.Is(err, ErrHasCommits) {
				t.Errorf("InitialCommit on a repository with commits: %v, want ErrHasCommits", err)
			}
		})
	}
}

func TestEmptyWorkspaceCommits(t *testing.T) {
	t.Parallel()
	dir := initRepo(t)
	r := mustOpen(t, dir)
	h := mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if c := headCommitObject(t, dir); c.TreeHash != emptyTree || c.Hash.String() != h {
		t.Errorf("commit of an empty workspace has tree %s, want the empty tree", c.TreeHash)
	}
}

// TestSubfolderWorkspace: a workspace inside a bigger repository commits
// only its own folder, reports only its own changes, and leaves the rest of
// the index alone.
func TestSubfolderWorkspace(t *testing.T) {
	t.Parallel()
	dir, root := committedRepo(t, map[string]string{
		".gitignore":           "*.log\n",
		"other/keep.txt":       "v1\n",
		"svc/api/main.go":      "package main\n",
		"svc/api/.gitignore":   "build/\n",
		"svc/api/build/out":    "bin\n",
		"svc/api/x.log":        "ignored by the root .gitignore\n",
		"svc/apiary/notes.txt": "not the workspace\n",
	})
	ws := filepath.Join(dir, "svc", "api")
	r := mustOpen(t, ws)
	if r.Root() != dir || r.Prefix() != "svc/api" {
		t.Fatalf("Open(%s): root %s prefix %q", ws, r.Root(), r.Prefix())
	}
	write(t, dir, map[string]string{
		"other/keep.txt":       "v2 (the user's unrelated change)\n",
		"svc/apiary/notes.txt": "changed too\n",
		"svc/api/main.go":      "package main // changed\n",
		"svc/api/new.go":       "package main\n",
		"svc/api/build/out2":   "bin\n",
	})
	dirty, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"main.go", "new.go"}; !reflect.DeepEqual(dirty, want) {
		t.Errorf("Dirty in the subfolder = %v, want %v", dirty, want)
	}
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "changed the api", Status: "running"})
	files := headFiles(t, dir)
	want := map[string]string{
		".gitignore":           "*.log\n",
		"other/keep.txt":       "v1\n",
		"svc/api/.gitignore":   "build/\n",
		"svc/api/main.go":      "package main // changed\n",
		"svc/api/new.go":       "package main\n",
		"svc/apiary/notes.txt": "not the workspace\n",
	}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("HEAD after a subfolder commit:\n%v\nwant\n%v", files, want)
	}
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 0 {
		t.Errorf("Dirty in the subfolder after the commit = %v, %v", dirty, err)
	}
	if dirty, err := root.Dirty(); err != nil || !reflect.DeepEqual(dirty, []string{"other/keep.txt", "svc/apiary/notes.txt"}) {
		t.Errorf("Dirty at the root after the subfolder commit = %v, %v; want the changes outside the workspace", dirty, err)
	}
	// Deleting the whole workspace content removes its folder from the tree.
	write(t, dir, map[string]string{"svc/api": "\x00"})
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 2, Summary: "removed everything", Status: "running"})
	if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, []string{".gitignore", "other/keep.txt", "svc/apiary/notes.txt"}) {
		t.Errorf("HEAD after emptying the workspace: %v", got)
	}
	if hist, err := r.History("ab12cd34"); err != nil || len(hist) != 2 {
		t.Errorf("History from the subfolder = %v, %v", hist, err)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	repo := initRepo(t)
	write(t, repo, map[string]string{".gitignore": "scratch/\n", "scratch/x/f": "1", "src/pkg/f.go": "package pkg\n"})
	bare := t.TempDir()
	if _, err := git.PlainInit(bare, true); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		dir        string
		wantErr    error
		wantPrefix string
	}{
		{"root", repo, nil, ""},
		{"subfolder", filepath.Join(repo, "src", "pkg"), nil, "src/pkg"},
		{"not a repository", t.TempDir(), ErrNotRepo, ""},
		{"bare repository", bare, ErrNotRepo, ""},
		{"ignored folder", filepath.Join(repo, "scratch", "x"), ErrNotRepo, ""},
		{"inside .git", filepath.Join(repo, ".git"), ErrNotRepo, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(tt.dir)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Open(%s) error %v, want %v", tt.dir, err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.dir) {
					t.Errorf("error %q does not name the folder", err)
				}
				return
			}
			if r.Root() != repo || r.Prefix() != tt.wantPrefix {
				t.Errorf("Open(%s) = root %s prefix %q", tt.dir, r.Root(), r.Prefix())
			}
		})
	}
}

func TestDirty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{"clean", func(*testing.T, string) {}, nil},
		{"modified", func(t *testing.T, dir string) { write(t, dir, map[string]string{"a.txt": "changed\n"}) }, []string{"a.txt"}},
		{"untracked", func(t *testing.T, dir string) { write(t, dir, map[string]string{"sub/new.txt": "new\n"}) }, []string{"sub/new.txt"}},
		{"ignored", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{"build/out.bin": "x", "x.log": "x", "sub/deep/y.log": "y"})
		}, nil},
		{"deleted", func(t *testing.T, dir string) { write(t, dir, map[string]string{"sub/b.txt": "\x00"}) }, []string{"sub/b.txt"}},
		{"touched, same content", func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "a.txt"), later, later); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"staged, then reverted in the work tree", func(t *testing.T, dir string) {
			write(t, dir, map[string]string{"a.txt": "staged\n"})
			g, err := git.PlainOpen(dir)
			if err != nil {
				t.Fatal(err)
			}
			w, err := g.Worktree()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Add("a.txt"); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{"a.txt": "a\n"})
		}, []string{"a.txt"}},
		{"executable bit", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "a.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"a.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, r := committedRepo(t, map[string]string{".gitignore": "build/\n*.log\n", "a.txt": "a\n", "sub/b.txt": "b\n"})
			tt.change(t, dir)
			got, err := r.Dirty()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Dirty = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTreeHash(t *testing.T) {
	t.Parallel()
	dir, r := committedRepo(t, map[string]string{".gitignore": "node_modules/\n", "a.txt": "a\n", ".grub/.gitignore": harness.Gitignore,
		".grub/ab12cd34/state.json": "{}"})
	token := func() string {
		t.Helper()
		h, err := r.TreeHash(".grub")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	full, err := r.TreeHash()
	if err != nil {
		t.Fatal(err)
	}
	if head := headCommitObject(t, dir).TreeHash.String(); full != head {
		t.Errorf("TreeHash() of a clean tree = %s, want HEAD's tree %s", full, head)
	}
	steps := []struct {
		name    string
		change  func()
		changed bool
	}{
		{"nothing", func() {}, false},
		{"grub's own files", func() {
			write(t, dir, map[string]string{".grub/ab12cd34/state.json": `{"x":1}`, ".grub/ab12cd34/progress-log.md": "x"})
		}, false},
		{"an ignored folder", func() { write(t, dir, map[string]string{"node_modules/p/i.js": "x"}) }, false},
		{"touched without change", func() {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "a.txt"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a new file", func() { write(t, dir, map[string]string{"b.txt": "b\n"}) }, true},
		{"an edit", func() { write(t, dir, map[string]string{"a.txt": "A\n"}) }, true},
		{"an edit undone", func() { write(t, dir, map[string]string{"a.txt": "a\n"}) }, true},
		{"a deletion", func() { write(t, dir, map[string]string{"b.txt": "\x00"}) }, true},
	}
	prev := token()
	base := prev
	for _, s := range steps {
		s.change()
		got := token()
		if (got != prev) != s.changed {
			t.Errorf("%s: token changed = %v, want %v", s.name, got != prev, s.changed)
		}
		prev = got
	}
	if prev != base {
		t.Errorf("the workspace is back to its first content but the token differs")
	}
}

// TestRacilyCleanEdit: an edit that keeps the size and the modification
// time is still seen (the change time and the index's own time guard it).
func TestRacilyCleanEdit(t *testing.T) {
	t.Parallel()
	dir, r := committedRepo(t, map[string]string{"a.txt": "aaaa\n"})
	p := filepath.Join(dir, "a.txt")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"a.txt": "bbbb\n"})
	if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if dirty, err := r.Dirty(); err != nil || !reflect.DeepEqual(dirty, []string{"a.txt"}) {
		t.Errorf("Dirty after a same-size, same-time edit = %v, %v", dirty, err)
	}
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if got := headFiles(t, dir)["a.txt"]; got != "bbbb\n" {
		t.Errorf("a.txt in HEAD = %q, want the edit", got)
	}
}

func TestAuthor(t *testing.T) {
	// Not parallel: it sets HOME and the environment.
	tests := []struct {
		name       string
		global     string // ~/.gitconfig
		local      string // appended to .git/config
		env        map[string]string
		wantAuthor string
		wantComm   string
	}{
		{name: "fallback", wantAuthor: "grub <grub@localhost>", wantComm: "grub <grub@localhost>"},
		{name: "global", global: "[user]\n\tname = Global User\n\temail = global@example.com\n",
			wantAuthor: "Global User <global@example.com>", wantComm: "Global User <global@example.com>"},
		{name: "repository over global", global: "[user]\n\tname = Global User\n\temail = global@example.com\n",
			local:      "[user]\n\tname = Repo User\n",
			wantAuthor: "Repo User <global@example.com>", wantComm: "Repo User <global@example.com>"},
		{name: "author and committer sections", local: "[user]\n\tname = U\n\temail = u@x\n[author]\n\tname = A\n[committer]\n\temail = c@x\n",
			wantAuthor: "A <u@x>", wantComm: "U <c@x>"},
		{name: "environment", local: "[user]\n\tname = U\n\temail = u@x\n",
			env:        map[string]string{"GIT_AUTHOR_NAME": "Env Author", "GIT_COMMITTER_EMAIL": "env@x"},
			wantAuthor: "Env Author <u@x>", wantComm: "U <env@x>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.global != "" {
				write(t, home, map[string]string{".gitconfig": tt.global})
			}
			dir := initRepo(t)
			if tt.local != "" {
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.WriteString(tt.local); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			r := mustOpen(t, dir)
			mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
			c := headCommitObject(t, dir)
			if got := c.Author.Name + " <" + c.Author.Email + ">"; got != tt.wantAuthor {
				t.Errorf("author %q, want %q", got, tt.wantAuthor)
			}
			if got := c.Committer.Name + " <" + c.Committer.Email + ">"; got != tt.wantComm {
				t.Errorf("committer %q, want %q", got, tt.wantComm)
			}
		})
	}
}

func TestGlobalAndInfoExcludes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	write(t, home, map[string]string{".config/git/ignore": ".DS_Store\n", "custom-ignore": "*.swp\n"})
	dir := initRepo(t)
	write(t, dir, map[string]string{
		".git/info/exclude": "/local-notes/\n",
		"a.txt":             "a\n",
		".DS_Store":         "x",
		"sub/.DS_Store":     "x",
		"local-notes/todo":  "x",
		"a.txt.swp":         "x",
	})
	r := mustOpen(t, dir)
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, []string{"a.txt", "a.txt.swp"}) {
		t.Errorf("with the default global excludes and info/exclude, HEAD has %v", got)
	}
	// core.excludesFile replaces the default file.
	write(t, home, map[string]string{".gitconfig": "[core]\n\texcludesFile = ~/custom-ignore\n"})
	write(t, dir, map[string]string{"b.txt.swp": "x"})
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 2, Status: "running"})
	if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, []string{".DS_Store", "a.txt", "a.txt.swp", "sub/.DS_Store"}) {
		t.Errorf("with core.excludesFile, HEAD has %v", got)
	}
}

func TestCommitRefusesUnmergedIndex(t *testing.T) {
	t.Parallel()
	dir, r := committedRepo(t, map[string]string{"a.txt": "a\n"})
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := g.Storer.Index()
	if err != nil {
		t.Fatal(err)
	}
	e := *idx.Entries[0]
	idx.Entries[0].Stage = index.OurMode
	e.Stage = index.TheirMode
	idx.Entries = append(idx.Entries, &e)
	if err := g.Storer.SetIndex(idx); err != nil {
		t.Fatal(err)
	}
	_, err = r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if err == nil || !strings.Contains(err.Error(), "unmerged") || !strings.Contains(err.Error(), "a.txt") {
		t.Errorf("CommitTurn on a conflicted index: %v, want an error naming a.txt", err)
	}
	if dirty, err := r.Dirty(); err != nil || !reflect.DeepEqual(dirty, []string{"a.txt"}) {
		t.Errorf("Dirty on a conflicted index = %v, %v", dirty, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !os.IsNotExist(err) {
		t.Errorf("index.lock left behind: %v", err)
	}
}

func TestCommitWaitsForIndexLock(t *testing.T) {
	t.Parallel()
	dir := initRepo(t)
	write(t, dir, map[string]string{"a.txt": "a\n"})
	r := mustOpen(t, dir)
	lock := filepath.Join(dir, ".git", "index.lock")
	write(t, dir, map[string]string{".git/index.lock": ""})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.CommitTurn(ctx, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CommitTurn while another process holds index.lock: %v, want the context's deadline", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("another process's index.lock was removed: %v", err)
	}
	if has, _ := r.HasCommits(); has {
		t.Error("a commit was made while the index was locked")
	}
	// Once the other process is done, the commit goes through.
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
}

func TestCommitCancelled(t *testing.T) {
	t.Parallel()
	dir := initRepo(t)
	write(t, dir, map[string]string{"a.txt": "a\n"})
	r := mustOpen(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.CommitTurn(ctx, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitTurn with a cancelled context: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !os.IsNotExist(err) {
		t.Errorf("index.lock left behind: %v", err)
	}
	if has, _ := r.HasCommits(); has {
		t.Error("a cancelled commit moved HEAD")
	}
}

func TestDetachedHead(t *testing.T) {
	t.Parallel()
	dir, r := committedRepo(t, map[string]string{"a.txt": "a\n"})
	first := headCommitObject(t, dir).Hash.String()
	g, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, plumbing.NewHash(first))); err != nil {
		t.Fatal(err)
	}
	h := mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	head, err := g.Storer.Reference(plumbing.HEAD)
	if err != nil {
		t.Fatal(err)
	}
	if head.Type() != plumbing.HashReference || head.Hash().String() != h {
		t.Errorf("HEAD = %v, want detached at %s", head, h)
	}
	master, err := g.Storer.Reference(plumbing.Master)
	if err != nil || master.Hash().String() != first {
		t.Errorf("master = %v, %v; want it left at %s", master, err, first)
	}
}

// TestNestedRepositorySkipped: a repository inside the workspace (a
// dependency the agent cloned, say) is not committed, as git does not add
// its files either.
func TestNestedRepositorySkipped(t *testing.T) {
	t.Parallel()
	dir := initRepo(t)
	write(t, dir, map[string]string{"a.txt": "a\n", "vendor/dep/lib.go": "package dep\n"})
	if _, err := git.PlainInit(filepath.Join(dir, "vendor", "dep"), false); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, dir)
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Status: "running"})
	if got := keys(headFiles(t, dir)); !reflect.DeepEqual(got, []string{"a.txt"}) {
		t.Errorf("HEAD has %v, want the nested repository left out", got)
	}
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 0 {
		t.Errorf("Dirty = %v, %v", dirty, err)
	}
}

// A commit writes the index before it moves the branch: a kill between
// the two leaves the turn uncommitted (the next run commits it) with the
// index already right, never a commit on the branch with the index of the
// turn before, which shows a finished task's files as changed. A branch
// that cannot move gets the index before back.
func TestCommitWritesTheIndexBeforeTheBranch(t *testing.T) {
	dir, r := committedRepo(t, map[string]string{"a.txt": "one\n"})
	head := headCommitObject(t, dir).Hash
	one := plumbing.ComputeHash(plumbing.BlobObject, []byte("one\n")).String()
	two := plumbing.ComputeHash(plumbing.BlobObject, []byte("two\n")).String()
	write(t, dir, map[string]string{"a.txt": "two\n"})
	called := false
	beforeRefMove = func() error {
		called = true
		if got := readIndexOf(t, r)["a.txt"]; got != two {
			t.Errorf("when the branch moves, the index holds %s for a.txt, want the staged %s", got, two)
		}
		if now := headCommitObject(t, dir).Hash; now != head {
			t.Errorf("the branch moved before the index was written")
		}
		return errors.New("killed here")
	}
	t.Cleanup(func() { beforeRefMove = nil })
	if _, err := r.CommitTurn(context.Background(), Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"}); err == nil || !strings.Contains(err.Error(), "killed here") {
		t.Fatalf("CommitTurn = %v, want the failure at the branch", err)
	}
	if !called {
		t.Fatal("the commit never reached the point between the index and the branch")
	}
	if got := readIndexOf(t, r)["a.txt"]; got != one || headCommitObject(t, dir).Hash != head {
		t.Errorf("after a branch that could not move: index %s for a.txt (want %s back), HEAD moved: %v", got, one, headCommitObject(t, dir).Hash != head)
	}
	beforeRefMove = nil
	mustCommit(t, r, Turn{TaskID: "ab12cd34", Iteration: 1, Summary: "s", Status: "running"})
	if dirty, err := r.Dirty(); err != nil || len(dirty) != 0 {
		t.Errorf("after the commit: dirty %v, %v", dirty, err)
	}
}
