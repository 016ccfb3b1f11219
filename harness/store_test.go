package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/featurelist"
	"github.com/grub-dev/grub/internal/atomicfile"
	"github.com/grub-dev/grub/loopstate"
	"github.com/grub-dev/grub/schemas"
	"github.com/grub-dev/grub/templates"
)

// newStore opens a store on a fresh temp workspace, with a private
// folder of its own.
func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Private = t.TempDir()
	return s
}

// newState is a minimal valid new task.
func newState(goal string) *State {
	return &State{Goal: goal, Status: StatusRunning, Limits: DefaultLimits(), Agent: Agent{Kind: "openai", Model: "gpt-x"}}
}

// mustCreate creates a task and returns it.
func mustCreate(t *testing.T, s *Store, st *State) *State {
	t.Helper()
	if err := s.Create(st); err != nil {
		t.Fatalf("Create: %v", err)
	}
	return st
}

func TestOpenAndPaths(t *testing.T) {
	s, err := Open("some/../work")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "work"); s.Root != want {
		t.Fatalf("Root = %q, want %q", s.Root, want)
	}
	if got, want := s.Path("0a1b2c3d", FileState), filepath.Join(wd, "work", ".grub", "0a1b2c3d", "state.json"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	cases := map[string]string{
		s.Path("0a1b2c3d", FileState):                 ".grub/0a1b2c3d/state.json",
		s.Root:                                        ".",
		filepath.Join(s.Root, "a", "b.txt"):           "a/b.txt",
		filepath.Join(filepath.Dir(s.Root), "x.txt"):  filepath.ToSlash(filepath.Join(filepath.Dir(s.Root), "x.txt")),
		filepath.Join(s.Root, "..", "work2", "y.txt"): filepath.ToSlash(filepath.Join(filepath.Dir(s.Root), "work2", "y.txt")),
		"already/rel/../x":                            "already/x",
	}
	for in, want := range cases {
		if got := s.Rel(in); got != want {
			t.Errorf("Rel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		id, err := NewID()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidID(id) {
			t.Fatalf("NewID() = %q, not 8 lowercase hex", id)
		}
		seen[id] = true
	}
	if len(seen) < 195 {
		t.Fatalf("200 ids gave only %d distinct values", len(seen))
	}
}

func TestCreateWritesTheHarness(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("add OAuth login"))
	if !ValidID(st.ID) || st.Version != StateVersion || st.CreatedAt.IsZero() || !st.UpdatedAt.Equal(st.CreatedAt) ||
		st.Locale != "en" || st.Phase != PhaseInitializer {
		t.Fatalf("Create did not fill the defaults: %+v", st)
	}
	fi, err := os.Stat(s.Path(st.ID, FileInitScript))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("init.sh mode %v, want 0755", fi.Mode().Perm())
	}
	want := map[string]string{
		FileInitScript:  templates.InitScript,
		FileProgressLog: templates.ProgressLogHeader(st.ID, "add OAuth login"),
	}
	for name, content := range want {
		got, err := os.ReadFile(s.Path(st.ID, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, content)
		}
	}
	checklist, _ := os.ReadFile(s.Path(st.ID, FileChecklist))
	if !strings.Contains(string(checklist), "has not planned the features yet") {
		t.Errorf("checklist does not say the initializer has not planned:\n%s", checklist)
	}
	if _, err := os.Stat(s.Path(st.ID, FileFeatureList)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create wrote feature-list.json (stat: %v)", err)
	}
	gi, err := os.ReadFile(filepath.Join(s.GrubDir(), ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"*/*", "!*/state.json", "!*/feature-list.json", "!*/feature-checklist.md", "!*/progress-log.md", "!*/init.sh"} {
		if !strings.Contains(string(gi), line+"\n") {
			t.Errorf(".gitignore lacks %q:\n%s", line, gi)
		}
	}
	// No absolute path of the workspace leaks into a tracked file.
	for _, name := range []string{FileState, FileProgressLog, FileChecklist, FileInitScript} {
		data, _ := os.ReadFile(s.Path(st.ID, name))
		if bytes.Contains(data, []byte(s.Root)) {
			t.Errorf("%s contains the absolute workspace path %s", name, s.Root)
		}
	}
	// No temp file is left behind.
	entries, _ := os.ReadDir(s.Dir(st.ID))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	got, err := s.LoadState(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Goal != st.Goal || got.ID != st.ID || !got.CreatedAt.Equal(st.CreatedAt) {
		t.Errorf("LoadState = %+v, want %+v", got, st)
	}
}

func TestCreateRetriesOnIDCollision(t *testing.T) {
	s := newStore(t)
	mustCreate(t, s, &State{ID: "0a1b2c3d", Goal: "first", Status: StatusRunning, Limits: DefaultLimits(), Agent: Agent{Kind: "codex"}})
	ids := []string{"0a1b2c3d", "0a1b2c3d", "ffff0000"}
	newID = func() (string, error) { id := ids[0]; ids = ids[1:]; return id, nil }
	t.Cleanup(func() { newID = NewID })
	st := mustCreate(t, s, newState("second"))
	if st.ID != "ffff0000" || len(ids) != 0 {
		t.Fatalf("Create took id %q (ids left %v), want ffff0000 after two collisions", st.ID, ids)
	}
	first, err := s.LoadState("0a1b2c3d")
	if err != nil || first.Goal != "first" {
		t.Fatalf("the colliding task was changed: %+v, %v", first, err)
	}
}

// grub owns .grub/.gitignore: an edited copy (a user's lines, or an
// agent's `!*` that would take every runtime file back), an older grub's
// version, or a link in its place is written anew with Gitignore.
func TestEnsureGitignoreOwnsTheFile(t *testing.T) {
	s := newStore(t)
	if err := s.EnsureGitignore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.GrubDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("EnsureGitignore made .grub in a workspace without tasks (stat: %v)", err)
	}
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.GrubDir(), ".gitignore")
	older := "# Written by grub: runtime files of a running task, never committed.\n*/lock\n*/control.json\n*/control.lock\n*/turns/\n*/spill/\n*.tmp-*\n"
	for name, plant := range map[string]func() error{
		"edited":   func() error { return os.WriteFile(path, []byte("!*\n"), 0o644) },
		"user's":   func() error { return os.WriteFile(path, []byte("# mine\nnotes/\n"), 0o644) },
		"older":    func() error { return os.WriteFile(path, []byte(older), 0o644) },
		"symlink":  func() error { return os.Symlink(outside, path) },
		"a folder": func() error { return os.Mkdir(path, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.MkdirAll(s.GrubDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if err := plant(); err != nil {
				t.Fatal(err)
			}
			if err := s.EnsureGitignore(); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf(".gitignore is not a regular file: %v %v", fi, err)
			}
			if data, _ := os.ReadFile(path); string(data) != Gitignore {
				t.Errorf(".gitignore after EnsureGitignore:\n%s\nwant grub's:\n%s", data, Gitignore)
			}
			if data, _ := os.ReadFile(outside); string(data) != "keep me\n" {
				t.Errorf("the link's target was written: %q", data)
			}
		})
	}
}

func TestCreateRejects(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*State)
		pointer string
	}{
		{"empty goal", func(st *State) { st.Goal = "" }, "/goal"},
		{"no agent kind", func(st *State) { st.Agent.Kind = "" }, "/agent/kind"},
		{"bad id", func(st *State) { st.ID = "XYZ" }, "/id"},
		{"zero limits", func(st *State) { st.Limits = Limits{} }, "/limits/maxIterations"},
		{"bad status", func(st *State) { st.Status = "done" }, "/status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			st := newState("g")
			c.mutate(st)
			err := s.Create(st)
			var se *schemas.Error
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.pointer) {
				t.Fatalf("Create = %v, want a *schemas.Error at %s", err, c.pointer)
			}
			if _, err := os.Stat(s.GrubDir()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Create of an invalid state touched the disk: %s exists (%v)", GrubDirName, err)
			}
		})
	}
	t.Run("existing id", func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, &State{ID: "0a1b2c3d", Goal: "g", Status: StatusRunning, Limits: DefaultLimits(), Agent: Agent{Kind: "claude"}})
		err := s.Create(&State{ID: "0a1b2c3d", Goal: "h", Status: StatusRunning, Limits: DefaultLimits(), Agent: Agent{Kind: "claude"}})
		if err == nil || !strings.Contains(err.Error(), ".grub/0a1b2c3d already exists") {
			t.Fatalf("Create = %v, want already exists", err)
		}
		st, err := s.LoadState("0a1b2c3d")
		if err != nil || st.Goal != "g" {
			t.Fatalf("the first task was changed: %+v, %v", st, err)
		}
	})
}

// fullState exercises every optional part of State.
func fullState() *State {
	now := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	ev := "go test ./auth: ok"
	cost := 1.0625
	return &State{
		Version: StateVersion, ID: "0a1b2c3d", Goal: "add OAuth login\nwith tests", Locale: "zh",
		Status: StatusBudgetLimited, Phase: PhaseExecution, CreatedAt: now, UpdatedAt: now.Add(time.Hour),
		CurrentIteration: 7, AwaitingTurn: true, TurnStartedAt: &now, ConsecutiveFailures: 2, ConsecutiveBlocked: 1, NoProgressTurns: 3,
		Limits: Limits{MaxIterations: 50, MaxConsecutiveFailures: 3, MaxInitializerFailures: 5, MaxBlocked: 3, TokenBudget: 2000000,
			TimeBudgetSeconds: 3600, MinFeatures: 15, MaxFeatures: 40, TurnTimeoutSeconds: 1800, InitTimeoutSeconds: 300, CostBudgetUSD: 2.5},
		Usage: Usage{InputTokens: 1000, CachedInputTokens: 400, OutputTokens: 50, Requests: 3, TokensUsed: 650, TimeUsedSeconds: 99, Estimated: true, CostUSD: &cost},
		Agent: Agent{Kind: AgentClaude, Bin: "./claude", Args: []string{"--permission-mode", "plan"}, StallTimeoutSeconds: 300},
		FeatureListBaseline: &featurelist.List{Version: 1, Goal: "add OAuth login", Features: []featurelist.Feature{
			{ID: "login-form", Category: "functional", Description: "form", Steps: []string{"open /login"}, Verify: "go test ./auth", Passes: true, Evidence: &ev},
			{ID: "logout", Category: "functional", Description: "logout", Steps: []string{}, Passes: false},
		}},
		LastDecision: &Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Summary: "s", Blocker: "no key", Question: "which provider?", Options: []string{"a", "b"}}, Iteration: 7},
		LastError:    "verification failed",
		StopReason:   "token budget spent",
		LastInit:     &Check{Command: ".grub/0a1b2c3d/init.sh", ExitCode: 1, Passed: false, TimedOut: true, OutputTail: "boom", Iteration: 6},
		Pending: Pending{Failure: "f", RecoveredUnknownTurn: true, CompletionRejected: "c", BlockedReexamine: "b",
			ObjectiveUpdated: &GoalChange{Old: "o", New: "n"}, Steer: []string{"use sqlite"}, Answer: "github"},
	}
}

func TestStateRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		st   *State
	}{
		{"defaults, nil baseline", &State{Version: StateVersion, ID: "00000000", Goal: "g", Locale: "en", Status: StatusRunning,
			Phase: PhaseInitializer, CreatedAt: time.Unix(0, 0).UTC(), UpdatedAt: time.Unix(1, 0).UTC(), Limits: DefaultLimits(), Agent: Agent{Kind: AgentOpenAI}}},
		{"every field", fullState()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if err := os.MkdirAll(s.Dir(c.st.ID), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveState(c.st); err != nil {
				t.Fatalf("SaveState: %v", err)
			}
			got, err := s.LoadState(c.st.ID)
			if err != nil {
				t.Fatalf("LoadState: %v", err)
			}
			a, _ := json.Marshal(c.st)
			b, _ := json.Marshal(got)
			if !bytes.Equal(a, b) {
				t.Errorf("round trip changed the state:\n%s\n%s", a, b)
			}
			if err := schemas.ValidateGo(schemas.State, "state.json", got); err != nil {
				t.Errorf("decoded state does not validate: %v", err)
			}
		})
	}
}

func TestSaveStateNeverWritesAnInvalidState(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	before, _ := s.StateBytes(st.ID)
	bad := *st
	bad.Usage.TokensUsed = -1
	err := s.SaveState(&bad)
	var se *schemas.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), ".grub/"+st.ID+"/state.json at /usage/tokensUsed") {
		t.Fatalf("SaveState = %v, want a *schemas.Error naming the file and /usage/tokensUsed", err)
	}
	after, _ := s.StateBytes(st.ID)
	if !bytes.Equal(before, after) {
		t.Fatal("SaveState changed state.json although the state was invalid")
	}
	var nf *NotFoundError
	missing := *st
	missing.ID = "ffffffff"
	if err := s.SaveState(&missing); !errors.As(err, &nf) {
		t.Fatalf("SaveState of a task without a folder = %v, want *NotFoundError", err)
	}
}

func TestLoadStateRejectsBadFiles(t *testing.T) {
	valid := func(t *testing.T) []byte {
		data, err := json.MarshalIndent(fullState(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	edit := func(f func(map[string]any)) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			var m map[string]any
			if err := json.Unmarshal(valid(t), &m); err != nil {
				t.Fatal(err)
			}
			f(m)
			data, _ := json.Marshal(m)
			return data
		}
	}
	cases := []struct {
		name string
		data func(*testing.T) []byte
		want []string
	}{
		{"truncated", func(t *testing.T) []byte { d := valid(t); return d[:len(d)/2] }, []string{"not valid JSON"}},
		{"empty", func(*testing.T) []byte { return nil }, []string{"not valid JSON"}},
		{"wrong type", edit(func(m map[string]any) { m["currentIteration"] = "seven" }), []string{"at /currentIteration"}},
		{"bad status", edit(func(m map[string]any) { m["status"] = "sleeping" }), []string{"at /status"}},
		{"missing goal", edit(func(m map[string]any) { delete(m, "goal") }), []string{"at /", "goal"}},
		{"api key", edit(func(m map[string]any) { m["agent"].(map[string]any)["apiKey"] = "sk-1" }), []string{"at /agent"}},
		{"bad baseline", edit(func(m map[string]any) {
			m["featureListBaseline"].(map[string]any)["features"].([]any)[0].(map[string]any)["id"] = "Bad Id"
		}), []string{"/featureListBaseline"}},
		{"id of another folder", edit(func(m map[string]any) { m["id"] = "ffffffff" }), []string{"at /id", "task folder"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			const id = "0a1b2c3d"
			if err := os.MkdirAll(s.Dir(id), 0o755); err != nil {
				t.Fatal(err)
			}
			data := c.data(t)
			if err := os.WriteFile(s.Path(id, FileState), data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.LoadState(id)
			var se *schemas.Error
			if !errors.As(err, &se) {
				t.Fatalf("LoadState = %v, want *schemas.Error", err)
			}
			for _, w := range append([]string{".grub/" + id + "/state.json"}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			after, _ := os.ReadFile(s.Path(id, FileState))
			if !bytes.Equal(after, data) {
				t.Error("LoadState changed the bad file")
			}
			// List surfaces the same error instead of hiding the task.
			if _, err := s.List(); !errors.As(err, &se) {
				t.Errorf("List = %v, want the *schemas.Error", err)
			}
		})
	}
}

func TestLoadStateMissing(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	for _, id := range []string{"ffffffff", "../../etc", ""} {
		_, err := s.LoadState(id)
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("LoadState(%q) = %v, want *NotFoundError", id, err)
		}
		if len(nf.Known) != 1 || nf.Known[0] != st.ID || !strings.Contains(err.Error(), "run grub list") {
			t.Errorf("LoadState(%q) error %q does not list the known task %s", id, err, st.ID)
		}
	}
}

// A crash during an atomic write leaves a temp file in the task folder:
// state.json still loads, the task is still listed, and the .gitignore rule
// keeps the temp file out of git.
func TestCrashLeftoverTempFile(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	f, err := os.CreateTemp(s.Dir(st.ID), atomicfile.TempPattern(FileState))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"torn`)
	f.Close()
	if _, err := s.LoadState(st.ID); err != nil {
		t.Fatalf("LoadState with a leftover temp file: %v", err)
	}
	if tasks, err := s.List(); err != nil || len(tasks) != 1 {
		t.Fatalf("List = %d tasks, %v; want the one task", len(tasks), err)
	}
	gi, err := os.ReadFile(filepath.Join(s.GrubDir(), ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gi), "\n"+atomicfile.TempGlob+"\n") {
		t.Errorf(".gitignore lacks the rule %q for temp files:\n%s", atomicfile.TempGlob, gi)
	}
	if ok, _ := path.Match(atomicfile.TempGlob, filepath.Base(f.Name())); !ok {
		t.Errorf("the rule %q does not match the temp file %s", atomicfile.TempGlob, filepath.Base(f.Name()))
	}
}

// createAt creates a task whose UpdatedAt is base+offset.
func createAt(t *testing.T, s *Store, id string, updated time.Time) {
	t.Helper()
	st := newState("goal " + id)
	st.ID = id
	st.CreatedAt = updated.Add(-time.Hour)
	st.UpdatedAt = updated
	mustCreate(t, s, st)
}

func TestListAndResolve(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	empty := newStore(t)
	if tasks, err := empty.List(); err != nil || len(tasks) != 0 {
		t.Fatalf("List without .grub = %v, %v; want empty", tasks, err)
	}
	if _, err := empty.Resolve(""); !errors.Is(err, ErrNoTasks) || !strings.Contains(err.Error(), "no grub task in "+empty.Root) || !strings.Contains(err.Error(), `grub start "<goal>"`) {
		t.Fatalf("Resolve on an empty workspace = %v, want ErrNoTasks naming the root", err)
	}

	s := newStore(t)
	createAt(t, s, "aaaa1111", base.Add(1*time.Hour))
	createAt(t, s, "aaaa2222", base.Add(3*time.Hour)) // most recently updated
	createAt(t, s, "bbbb3333", base.Add(2*time.Hour))
	// Noise that is not a task: a file, a folder with a bad name, a folder
	// without state.json (a Create in progress).
	os.WriteFile(filepath.Join(s.GrubDir(), "README"), nil, 0o644)
	os.MkdirAll(filepath.Join(s.GrubDir(), "not-a-task"), 0o755)
	os.MkdirAll(s.Dir("cccc4444"), 0o755)

	tasks, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, st := range tasks {
		order = append(order, st.ID)
	}
	if strings.Join(order, ",") != "aaaa2222,bbbb3333,aaaa1111" {
		t.Fatalf("List order = %v, want newest UpdatedAt first", order)
	}

	cases := []struct {
		in, want string
		err      string // substring of the error, "" for success
	}{
		{"", "aaaa2222", ""},
		{"aaaa1111", "aaaa1111", ""},
		{"AAAA1111", "aaaa1111", ""},
		{"b", "bbbb3333", ""},
		{"aaaa2", "aaaa2222", ""},
		{"aaaa", "", `"aaaa" is ambiguous: it starts aaaa1111, aaaa2222`},
		{"cccc4444", "", "known tasks are aaaa1111, aaaa2222, bbbb3333; run grub list"},
		{"ffffffff", "", "known tasks are"},
		{"../x", "", "run grub list"},
	}
	for _, c := range cases {
		got, err := s.Resolve(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("Resolve(%q) = %q, %v; want a *NotFoundError containing %q", c.in, got, err, c.err)
		}
	}
}

func TestAppendProgress(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	header := templates.ProgressLogHeader(st.ID, "g")
	if err := s.AppendProgress(st.ID, "first"); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEntry(st.ID, templates.Entry{Iteration: 1, Phase: "initializer", Decision: "continue", Summary: "planned"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path(st.ID, FileProgressLog))
	want := header + "first\n\n## Turn 1: initializer\n\n- Decision: continue\n- Summary: planned\n"
	if string(data) != want {
		t.Errorf("progress log:\n%q\nwant\n%q", data, want)
	}
	var nf *NotFoundError
	if err := s.AppendProgress("ffffffff", "x"); !errors.As(err, &nf) {
		t.Errorf("AppendProgress to a missing task = %v, want *NotFoundError", err)
	}
	if err := s.AppendEntry(st.ID, templates.Entry{Iteration: 2}); err == nil {
		t.Error("AppendEntry of an entry without a phase succeeded")
	}
}

func TestFeatureListFiles(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("g"))
	_, _, err := s.LoadFeatureList(st.ID)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), ".grub/"+st.ID+"/feature-list.json") {
		t.Fatalf("LoadFeatureList before the initializer = %v, want ErrNotExist naming the file", err)
	}
	ev := "proof"
	l := &featurelist.List{Version: 1, Goal: "g", Features: []featurelist.Feature{
		{ID: "a-b", Category: "functional", Description: "first", Steps: []string{"s"}, Passes: true, Evidence: &ev},
		{ID: "c", Category: "docs", Description: "second", Steps: []string{}},
	}}
	if err := s.SaveFeatureList(st.ID, l); err != nil {
		t.Fatal(err)
	}
	got, raw, err := s.LoadFeatureList(st.ID)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := os.ReadFile(s.Path(st.ID, FileFeatureList))
	if !bytes.Equal(raw, onDisk) || len(got.Features) != 2 || got.Features[0].Evidence == nil || *got.Features[0].Evidence != "proof" {
		t.Fatalf("LoadFeatureList = %+v (raw %d bytes)", got, len(raw))
	}
	if err := s.WriteChecklist(st.ID, "g", got); err != nil {
		t.Fatal(err)
	}
	checklist, _ := os.ReadFile(s.Path(st.ID, FileChecklist))
	for _, w := range []string{"**1/2 passing**", "- [x] `a-b`: first", "  - evidence: proof", "- [ ] `c`: second"} {
		if !strings.Contains(string(checklist), w) {
			t.Errorf("checklist lacks %q:\n%s", w, checklist)
		}
	}

	bad := *l
	bad.Features = []featurelist.Feature{{ID: "Bad", Category: "c", Description: "d", Steps: []string{}}}
	var se *schemas.Error
	if err := s.SaveFeatureList(st.ID, &bad); !errors.As(err, &se) || !strings.Contains(err.Error(), ".grub/"+st.ID+"/feature-list.json at /features/0/id") {
		t.Fatalf("SaveFeatureList of a bad list = %v, want *schemas.Error naming the file and /features/0/id", err)
	}
	if after, _ := os.ReadFile(s.Path(st.ID, FileFeatureList)); !bytes.Equal(after, onDisk) {
		t.Fatal("SaveFeatureList wrote an invalid list")
	}
	corrupt := []byte(`{"version":1,"goal":"g","features":[{"id":"x"}]}`)
	os.WriteFile(s.Path(st.ID, FileFeatureList), corrupt, 0o644)
	_, raw, err = s.LoadFeatureList(st.ID)
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "feature-list.json at /features/0") || !bytes.Equal(raw, corrupt) {
		t.Fatalf("LoadFeatureList of a bad file = %v (raw %q), want *schemas.Error at /features/0 and the raw bytes", err, raw)
	}
}

func TestSetGoalUpdatesStateNoteAndFeatureList(t *testing.T) {
	s := newStore(t)
	st := mustCreate(t, s, newState("make markers"))
	ev := "ran it"
	st.FeatureListBaseline = &featurelist.List{Version: 1, Goal: "make markers", Features: []featurelist.Feature{
		{ID: "a", Category: "functional", Description: "d", Steps: []string{"s"}, Passes: true, Evidence: &ev}}}
	if err := s.SetGoal(st, "make better markers"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGoal(st, "make the best markers"); err != nil {
		t.Fatal(err)
	}
	if st.Goal != "make the best markers" || st.Pending.ObjectiveUpdated == nil ||
		st.Pending.ObjectiveUpdated.Old != "make markers" || st.Pending.ObjectiveUpdated.New != "make the best markers" {
		t.Fatalf("state after two edits: goal %q, note %+v", st.Goal, st.Pending.ObjectiveUpdated)
	}
	l, _, err := s.LoadFeatureList(st.ID)
	if err != nil || l.Goal != "make the best markers" || st.FeatureListBaseline.Goal != l.Goal {
		t.Fatalf("feature list goal %v, %v", l, err)
	}
	if err := s.SetGoal(st, "make markers"); err != nil || st.Pending.ObjectiveUpdated != nil {
		t.Fatalf("editing back to the goal the agent saw leaves a note: %+v, %v", st.Pending.ObjectiveUpdated, err)
	}
}

// A decision on disk is the loop-state's fields followed by the iteration,
// as it was before Decision embedded loopstate.Decision.
func TestDecisionJSON(t *testing.T) {
	d := Decision{Decision: loopstate.Decision{Status: loopstate.Blocked, Summary: "s", NextStep: "n", Feature: "f",
		Blocker: "b", Question: "q?", Options: []string{"x", "y"}}, Iteration: 7}
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"blocked","summary":"s","nextStep":"n","feature":"f","blocker":"b","question":"q?","options":["x","y"],"iteration":7}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(NewDecision(loopstate.Unknown, "u"))
	if want := `{"status":"unknown","summary":"u"}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
