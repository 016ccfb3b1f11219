package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grub-dev/grub/agent"
	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/templates"
)

// agentFunc is a one-off test agent.
type agentFunc func(ctx context.Context, t agent.Turn) (agent.Result, error)

func (f agentFunc) RunTurn(ctx context.Context, t agent.Turn) (agent.Result, error) { return f(ctx, t) }

// then is an agent that lets the fake agent (playing "-features 2") do
// the turn and then calls after on the turn, returning its message instead
// of the fake agent's when after gives one.
func (r *run) then(after func(t agent.Turn) string) agent.Agent {
	fake := r.agent("-features 2")
	return agentFunc(func(ctx context.Context, t agent.Turn) (agent.Result, error) {
		res, err := fake.RunTurn(ctx, t)
		if err != nil {
			return res, err
		}
		if msg := after(t); msg != "" {
			res.FinalMessage = msg
		}
		return res, nil
	})
}

// plannedInProcess runs the initializer with the fake agent, leaving the
// task ready for its first execution turn.
func (r *run) plannedInProcess() {
	r.t.Helper()
	one := 1
	if st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{MaxIterations: &one}); err != nil || st.Phase != harness.PhaseExecution {
		r.t.Fatalf("initializer: %v %v", st, err)
	}
}

// runOneMore runs one more turn with a.
func (r *run) runOneMore(a agent.Agent) *harness.State {
	r.t.Helper()
	st, err := r.store.LoadState(r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	more := st.CurrentIteration + 1
	st, err = r.runAgent(context.Background(), a, harness.LimitChanges{MaxIterations: &more})
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// linkOutside replaces the harness file name by a symbolic link to a copy
// of it outside the workspace, passed through edit first.
func (r *run) linkOutside(name string, edit func([]byte) []byte) string {
	r.t.Helper()
	path := r.store.Path(r.id, name)
	data, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	target := filepath.Join(r.t.TempDir(), name)
	if err := os.WriteFile(target, edit(data), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		r.t.Skip(err)
	}
	return target
}

// mustBeRegular fails unless the harness file name is a regular file with
// the content want.
func (r *run) mustBeRegular(name string, want []byte) {
	r.t.Helper()
	path := r.store.Path(r.id, name)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		r.t.Fatalf("%s after the turn: %v, %v; want a regular file", name, fi, err)
	}
	if want == nil {
		return
	}
	if got, _ := os.ReadFile(path); string(got) != string(want) {
		r.t.Errorf("%s after the turn:\n%s\nwant:\n%s", name, got, want)
	}
}

const continueMsg = `<loop-state>{"status":"continue","summary":"moved a file","nextStep":"go on"}</loop-state>`

func same(b []byte) []byte { return b }

// A feature list replaced by a symbolic link, even to a valid list with a
// legal, verified flip, is an illegal edit: the accepted list is restored
// as a regular file and the turn fails with that reason.
func TestSymlinkedFeatureListIsRestored(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	accepted, _ := os.ReadFile(r.store.Path(r.id, harness.FileFeatureList))
	var target string
	st := r.runOneMore(r.then(func(agent.Turn) string {
		// The fake agent flipped feature-1 honestly; the link points to that.
		target = r.linkOutside(harness.FileFeatureList, same)
		return ""
	}))
	if st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, "feature-list.json is a symbolic link, not a regular file") {
		t.Fatalf("failures %d, last error %q; want the turn failed for the link", st.ConsecutiveFailures, st.LastError)
	}
	r.mustBeRegular(harness.FileFeatureList, accepted)
	if st.FeatureListBaseline.Passing() != 0 {
		t.Errorf("the flip made through the link was accepted")
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target was removed: %v", err)
	}
	if !strings.Contains(r.log(), "symbolic link") {
		t.Errorf("the progress log does not give the reason:\n%s", r.log())
	}
}

// init.sh replaced by a symbolic link in an execution turn: restored as a
// regular file with its content from before the turn, the turn failed, and
// the link's target never run.
func TestSymlinkedInitScriptIsRestored(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	before, _ := os.ReadFile(r.store.Path(r.id, harness.FileInitScript))
	ran := filepath.Join(r.store.Root, "outside-script-ran")
	st := r.runOneMore(r.then(func(agent.Turn) string {
		r.linkOutside(harness.FileInitScript, func([]byte) []byte { return []byte("touch " + ran + "\n") })
		return ""
	}))
	if st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, "init.sh is a symbolic link, not a regular file") {
		t.Fatalf("failures %d, last error %q; want the turn failed for the link", st.ConsecutiveFailures, st.LastError)
	}
	r.mustBeRegular(harness.FileInitScript, before)
	if _, err := os.Stat(ran); err == nil {
		t.Error("grub ran the script the link pointed to")
	}
}

// The initializer's files too: an init.sh made a link is put back as the
// file it was, and a planned list made a link is removed; either fails the
// turn and no plan is accepted.
func TestInitializerFilesMustBeRegular(t *testing.T) {
	t.Parallel()
	for _, name := range []string{harness.FileInitScript, harness.FileFeatureList} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newTask(t, nil)
			st := r.runOneMore(r.then(func(agent.Turn) string {
				r.linkOutside(name, same)
				return ""
			}))
			if st.Phase != harness.PhaseInitializer || st.ConsecutiveFailures != 1 || !strings.Contains(st.LastError, name+" is a symbolic link") {
				t.Fatalf("phase %s, failures %d, last error %q", st.Phase, st.ConsecutiveFailures, st.LastError)
			}
			if name == harness.FileInitScript {
				r.mustBeRegular(name, []byte(templates.InitScript))
			} else if _, err := os.Lstat(r.store.Path(r.id, name)); !os.IsNotExist(err) {
				t.Errorf("the linked plan is still there (lstat: %v)", err)
			}
			if strings.Contains(st.LastError, "was not written") {
				t.Errorf("the removed plan is blamed twice: %q", st.LastError)
			}
		})
	}
}

// Links left between runs (or by a runner that died mid-turn) are put
// right when the run starts: the accepted list comes back, init.sh
// becomes the starter, and the log says why.
func TestResumeRestoresLinkedFiles(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	r.linkOutside(harness.FileFeatureList, same)
	r.linkOutside(harness.FileInitScript, same)
	r.runOneMore(r.then(func(agent.Turn) string { return continueMsg }))
	log := r.log()
	for _, want := range []string{"feature-list.json is a symbolic link", "init.sh is a symbolic link", "grub wrote the starter"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	r.mustBeRegular(harness.FileInitScript, nil)
	r.mustBeRegular(harness.FileFeatureList, nil)
}

// A decision missing from an output the backend cut says that the output
// was cut.
func TestMissingDecisionInCutOutputSaysSo(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.plannedInProcess()
	a := agentFunc(func(context.Context, agent.Turn) (agent.Result, error) {
		return agent.Result{FinalMessage: "start\n[grub: 1000 bytes of output cut here]\nend", OutputCut: 1000}, nil
	})
	st := r.runOneMore(a)
	for _, want := range []string{"no <loop-state> block", "The output was about 1047 bytes and grub kept the start and the end; the middle (1000 bytes) was cut"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error %q lacks %q", st.LastError, want)
		}
	}
}

// A file the commit left out for its size is named on the progress lines
// and in the progress log, once per run.
func TestLeftOutFilesAreWarnedAbout(t *testing.T) {
	t.Parallel()
	r := newTask(t, nil)
	r.commits.report = CommitReport{MaxSize: 50 << 20, LeftOut: []LeftOutFile{{Path: "data/big.bin", Size: 60 << 20}}}
	st, err := r.run(context.Background(), "-features 2", harness.LimitChanges{})
	if err != nil || st.Status != harness.StatusComplete {
		t.Fatalf("%v %v", st, err)
	}
	want := "data/big.bin (60 MiB) is larger than 50 MiB and was left out of the turn's commit; it stays in the work tree"
	if n := strings.Count(r.stderr.String(), "grub: warning: "+want); n != 1 {
		t.Errorf("the progress lines warn %d times, want once:\n%s", n, r.stderr.String())
	}
	if n := strings.Count(r.log(), "- Warning: "+want); n != 1 {
		t.Errorf("the progress log warns %d times, want once:\n%s", n, r.log())
	}
}

// Progress lines show the agent's text with control characters escaped,
// on one line.
func TestProgressLinesAreEscaped(t *testing.T) {
	var b strings.Builder
	c := &Controller{progress: Lines(&b)}
	c.say("failed: %s", "ok \x1b]0;title\x07\x1b[2J\nnext")
	if want := "grub: failed: ok \\x1b]0;title\\x07\\x1b[2J\\nnext\n"; b.String() != want {
		t.Errorf("say printed %q, want %q", b.String(), want)
	}
}
