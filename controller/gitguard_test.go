package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
)

// dirGuard is a GitGuard for tests: it copies every file under a folder
// (the workspace's .git) and names changes by path. The real guard, with
// its key-by-key config diff, is internal/gitx's, tested there and in the
// testscripts; this one tests what the controller does with a change.
type dirGuard struct{ dir string }

type dirCopy struct {
	dir   string
	files map[string]fileCopy
}

type fileCopy struct {
	data []byte
	mode fs.FileMode
}

func readDir(dir string) (map[string]fileCopy, error) {
	files := map[string]fileCopy{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(dir), p)
		files[filepath.ToSlash(rel)] = fileCopy{data, info.Mode().Perm()}
		return nil
	})
	return files, err
}

func (g dirGuard) Record() (GitSnapshot, error) {
	files, err := readDir(g.dir)
	return &dirCopy{dir: g.dir, files: files}, err
}

// Load reads a copy Encode wrote.
func (g dirGuard) Load(data []byte) (GitSnapshot, error) {
	var enc map[string]encodedFile
	if err := json.Unmarshal(data, &enc); err != nil {
		return nil, err
	}
	files := map[string]fileCopy{}
	for p, f := range enc {
		files[p] = fileCopy{f.Data, f.Mode}
	}
	return &dirCopy{dir: g.dir, files: files}, nil
}

type encodedFile struct {
	Data []byte      `json:"data"`
	Mode fs.FileMode `json:"mode"`
}

func (c *dirCopy) Encode() ([]byte, error) {
	enc := map[string]encodedFile{}
	for p, f := range c.files {
		enc[p] = encodedFile{f.data, f.mode}
	}
	return json.Marshal(enc)
}

func (c *dirCopy) Check() ([]string, error) {
	now, err := readDir(c.dir)
	if err != nil {
		return nil, err
	}
	var changes []string
	for p, f := range now {
		old, ok := c.files[p]
		switch {
		case !ok:
			changes = append(changes, p+" was added")
		case string(old.data) != string(f.data) || old.mode != f.mode:
			changes = append(changes, p+" was changed")
		}
	}
	for p := range c.files {
		if _, ok := now[p]; !ok {
			changes = append(changes, p+" was removed")
		}
	}
	sort.Strings(changes)
	return changes, nil
}

func (c *dirCopy) Restore() error {
	now, err := readDir(c.dir)
	if err != nil {
		return err
	}
	for p := range now {
		if _, ok := c.files[p]; !ok {
			if err := os.Remove(filepath.Join(filepath.Dir(c.dir), p)); err != nil {
				return err
			}
		}
	}
	for p, f := range c.files {
		full := filepath.Join(filepath.Dir(c.dir), p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.data, f.mode); err != nil {
			return err
		}
		if err := os.Chmod(full, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// plantingAgent plays another agent and then, on the iterations it names,
// does what a hostile turn would do to the workspace.
type plantingAgent struct {
	agent.Agent
	plant map[int]func(agent.Turn) error
}

func (p plantingAgent) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	res, err := p.Agent.RunTurn(ctx, t)
	if f := p.plant[t.Iteration]; f != nil {
		if perr := f(t); perr != nil {
			return res, perr
		}
	}
	return res, err
}

// gitTask is a task whose workspace has a .git folder with a config and
// a sample hook, and the guard over it.
func gitTask(t *testing.T) (*run, string) {
	t.Helper()
	r := newTask(t, nil)
	gitDir := filepath.Join(r.store.Root, ".git")
	for name, content := range map[string]string{
		"config":                  "[core]\n\tbare = false\n",
		"hooks/pre-commit.sample": "#!/bin/sh\nexit 0\n",
	} {
		p := filepath.Join(gitDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r, gitDir
}

func (r *run) runGuarded(a agent.Agent, gitDir string) *harness.State {
	r.t.Helper()
	st, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, Committer: &r.commits, GitGuard: dirGuard{gitDir}})
	if err != nil {
		r.t.Fatal(err, r.stderr.String())
	}
	return st
}

func plantHook(name string) func(agent.Turn) error {
	return func(t agent.Turn) error {
		return os.WriteFile(filepath.Join(t.Workspace, ".git", "hooks", name), []byte("#!/bin/sh\ntouch PLANTED\n"), 0o755)
	}
}

func setConfig(t agent.Turn) error {
	p := filepath.Join(t.Workspace, ".git", "config")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(f, "\tfsmonitor = touch PLANTED\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func both(fs ...func(agent.Turn) error) func(agent.Turn) error {
	return func(t agent.Turn) error {
		for _, f := range fs {
			if err := f(t); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestGitPlantByTheAgent: a turn that writes a hook and changes git's
// config, with an otherwise honest flip, is failed naming each change,
// everything is restored, the flip is not accepted, and the task goes on.
func TestGitPlantByTheAgent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		iter  int
		plant func(agent.Turn) error
		want  []string
	}{
		{"execution turn", 2, both(plantHook("pre-commit"), setConfig), []string{".git/config was changed", ".git/hooks/pre-commit was added"}},
		{"initializer turn", 1, plantHook("post-checkout"), []string{".git/hooks/post-checkout was added"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, gitDir := gitTask(t)
			before, err := readDir(gitDir)
			if err != nil {
				t.Fatal(err)
			}
			a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{c.iter: c.plant}}
			st := r.runGuarded(a, gitDir)
			if st.Status != harness.StatusComplete || st.CurrentIteration != 4 {
				t.Fatalf("status %s after %d turns, want complete after 4 (one failed)\n%s", st.Status, st.CurrentIteration, r.stderr.String())
			}
			after, err := readDir(gitDir)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf(".git after the run:\n%v\nwant\n%v", after, before)
			}
			msg := "the turn changed git's configuration or hooks, which can run programs with the user's rights; restored: " + strings.Join(c.want, "; ")
			if !strings.Contains(r.log(), msg) {
				t.Errorf("progress log lacks %q:\n%s", msg, r.log())
			}
			next, err := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", fmt.Sprintf("%04d.prompt.md", c.iter+1)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(next), msg) {
				t.Errorf("the next prompt does not carry the failure")
			}
			if !strings.Contains(r.stderr.String(), "changed git's configuration or hooks; restored") {
				t.Errorf("no progress line: %s", r.stderr.String())
			}
		})
	}
}

// TestGitPlantByInitScript: init.sh, run by grub to verify the initializer's
// plan, plants a hook. The hook is removed, the plan is not accepted (the
// task stays in the initializer phase), and the next turn starts over.
func TestGitPlantByInitScript(t *testing.T) {
	t.Parallel()
	r, gitDir := gitTask(t)
	plantInInit := func(t agent.Turn) error {
		p := filepath.Join(t.HarnessDir, harness.FileInitScript)
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(f, "printf '#!/bin/sh\\ntouch PLANTED\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	var phases []string
	a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{1: plantInInit,
		2: func(t agent.Turn) error { phases = append(phases, t.Phase); return nil }}}
	st := r.runGuarded(a, gitDir)
	if st.Status != harness.StatusComplete || st.CurrentIteration != 4 {
		t.Fatalf("status %s after %d turns, want complete after 4\n%s", st.Status, st.CurrentIteration, r.stderr.String())
	}
	if len(phases) != 1 || phases[0] != string(harness.PhaseInitializer) {
		t.Errorf("turn 2 ran in phase %v, want the initializer again", phases)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "hooks", "pre-commit")); err == nil {
		t.Error("the hook init.sh planted is still there")
	}
	msg := "init.sh or a verify command, run by grub to verify the turn, changed git's configuration or hooks, which can run programs with the user's rights; restored: .git/hooks/pre-commit was added"
	if !strings.Contains(r.log(), msg) {
		t.Errorf("progress log lacks %q:\n%s", msg, r.log())
	}
}

// TestGitGuardRecordError: a copy that cannot be taken stops the run
// before the agent gets a turn.
func TestGitGuardRecordError(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	called := false
	a := plantingAgent{Agent: r.agent("-features 2"), plant: map[int]func(agent.Turn) error{1: func(agent.Turn) error { called = true; return nil }}}
	_, err := Run(context.Background(), Options{Store: r.store, TaskID: r.id, Agent: a, Clock: r.clock,
		Progress: &r.stderr, Heartbeat: time.Hour, GitGuard: dirGuard{filepath.Join(r.store.Root, "no-such-dir")}})
	if err == nil || !strings.Contains(err.Error(), "copy git's hooks and configuration before the turn") {
		t.Fatalf("Run: %v, want the guard's error", err)
	}
	if called {
		t.Error("the agent ran without a copy to restore from")
	}
}

// crash is what crashingAgent panics with: the run dies mid-turn, as at
// the failpoint turn.after-agent, with state left awaiting the turn.
type crash struct{}

// crashingAgent plants in turn n, then dies before the turn ends.
type crashingAgent struct {
	agent.Agent
	n     int
	plant func(agent.Turn) error
}

func (c crashingAgent) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) {
	res, err := c.Agent.RunTurn(ctx, t)
	if t.Iteration == c.n {
		if perr := c.plant(t); perr != nil {
			return res, perr
		}
		panic(crash{})
	}
	return res, err
}

// TestResumeComparesTheKeptGitCopy: a run that dies after the agent
// planted a hook and set core.fsmonitor leaves the copy taken before the
// turn in the task's private folder; the next run compares with it as the
// end of the turn would have, restores the git folder, and names each
// change in the unknown turn's record and the next prompt.
func TestResumeComparesTheKeptGitCopy(t *testing.T) {
	t.Parallel()
	r, gitDir := gitTask(t)
	r.store.Private = t.TempDir()
	before, err := readDir(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if v := recover(); v != (crash{}) {
				t.Fatalf("the run did not die mid-turn (recovered %v)", v)
			}
		}()
		r.runGuarded(crashingAgent{Agent: r.agent("-features 2"), n: 2, plant: both(plantHook("pre-commit"), setConfig)}, gitDir)
	}()
	if st, err := r.store.LoadState(r.id); err != nil || !st.AwaitingTurn {
		t.Fatalf("after the crash: awaiting %v, %v", st != nil && st.AwaitingTurn, err)
	}
	st := r.runGuarded(r.agent("-features 2"), gitDir)
	if st.Status != harness.StatusComplete {
		t.Fatalf("status %s after resume", st.Status)
	}
	after, err := readDir(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("git folder after resume:\n%v\nwant\n%v", after, before)
	}
	log := r.log()
	for _, want := range []string{"the turn, which a crash interrupted, changed git's configuration or hooks", ".git/hooks/pre-commit was added", ".git/config was changed"} {
		if !strings.Contains(log, want) {
			t.Errorf("the progress log lacks %q:\n%s", want, log)
		}
	}
	prompt, _ := os.ReadFile(filepath.Join(r.store.Dir(r.id), "turns", "0003.prompt.md"))
	if !strings.Contains(string(prompt), ".git/hooks/pre-commit was added") {
		t.Errorf("the next prompt does not name the change:\n%s", prompt)
	}
}
