package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireNamespaces skips a test the machine cannot run, saying why.
func requireNamespaces(t *testing.T) {
	t.Helper()
	if ok, why := Namespaces(); !ok {
		t.Skip(why)
	}
}

// repoFixture is a fixture whose workspace is a git repository with one
// commit and a task folder, and the policy that protects them: hooks/,
// config and info/exclude exist, config.worktree, info/attributes and
// control.json do not.
type repoFixture struct {
	fixture
	state, lock string
	p           Policy
}

func newRepoFixture(t *testing.T) repoFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	f := repoFixture{fixture: newFixture(t)}
	f.env = append(f.env, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	task := filepath.Join(f.ws, ".grub", "t1")
	f.state, f.lock = filepath.Join(task, "state.json"), filepath.Join(task, "lock")
	if err := os.MkdirAll(task, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{f.state, f.lock, filepath.Join(f.ws, "a.txt")} {
		if err := os.WriteFile(file, []byte("original\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.git(t, "init", "-q")
	f.git(t, "add", "a.txt")
	f.git(t, "commit", "-qm", "first")
	if err := os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(f.ws, ".git")
	guarded := []string{gitDir, filepath.Join(gitDir, "hooks"), filepath.Join(gitDir, "config"),
		filepath.Join(gitDir, "config.worktree"), filepath.Join(gitDir, "info", "attributes"),
		filepath.Join(gitDir, "info", "exclude")}
	harness := []string{f.state, f.lock, filepath.Join(task, "control.json")}
	f.p = Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ReadOnly: ProtectedPaths(f.ws, guarded, harness)}
	return f
}

// git runs git in the workspace, outside any sandbox.
func (f repoFixture) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = f.ws, f.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestReadOnlyPaths: through the launcher, a command can neither write
// the protected files nor move, remove or unmount them, nor move the
// folders that hold them aside; the files are unchanged after.
func TestReadOnlyPaths(t *testing.T) { bothStages(t, testReadOnlyPaths) }

func testReadOnlyPaths(t *testing.T, oneStage bool) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newRepoFixture(t)
	f.oneStage = oneStage
	configBefore, err := os.ReadFile(filepath.Join(f.ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, script, want string }{
		{"write state.json", `echo x > .grub/t1/state.json`, "Read-only file system"},
		{"append to state.json", `echo x >> "$PWD/.grub/t1/state.json"`, "Read-only file system"},
		{"write the lock", `echo x > .grub/t1/lock`, "Read-only file system"},
		{"plant a hook", `printf '#!/bin/sh\necho planted\n' > .git/hooks/pre-commit`, "Read-only file system"},
		{"write .git/config", `echo '[core]fsmonitor = x' >> .git/config`, "Read-only file system"},
		{"git config", `git config core.fsmonitor x`, ""},
		{"move over .git/config", `echo '[core]' > c && mv c .git/config`, "busy"},
		{"move over state.json", `echo '{}' > s && mv s .grub/t1/state.json`, "busy"},
		{"remove state.json", `rm -f .grub/t1/state.json`, "busy"},
		{"move hooks aside", `mv .git/hooks .git/hooks-old`, "busy"},
		{"move .git aside", `mv .git .git-old`, "busy"},
		{"move the task folder aside", `mv .grub/t1 .grub/t2`, "busy"},
		{"unmount", `umount .git/hooks`, ""},
		{"remount writable", `mount -o remount,bind,rw .git/hooks`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := f.run(t, f.p, "sh", "-c", tt.script)
			if code == 0 || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, output %q; want a failure saying %q", code, out, tt.want)
			}
		})
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if out, code := f.run(t, f.p, self, "__setattr_rw", filepath.Join(f.ws, ".git", "hooks")); code == 0 {
		t.Errorf("mount_setattr made the hooks writable again: %s", out)
	}
	for _, file := range []string{f.state, f.lock} {
		if data, err := os.ReadFile(file); err != nil || string(data) != "original\n" {
			t.Errorf("%s = %q, %v; want it unchanged", file, data, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was planted")
	}
	if data, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config")); !bytes.Equal(data, configBefore) {
		t.Errorf(".git/config changed:\n%s", data)
	}
}

// TestReadOnlyPathsLeaveWorkWritable: in the same sandbox, the workspace
// stays writable and git still commits (it writes objects, refs and the
// index in .git); files not yet there (info/attributes, control.json)
// are skipped, not a failure.
func TestReadOnlyPathsLeaveWorkWritable(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newRepoFixture(t)
	script := `set -e
echo new > b.txt
mkdir -p src && echo x > src/c.txt
git add b.txt src
git commit -qm second
echo '*.txt text' > .git/info/attributes
echo done`
	if out, code := f.run(t, f.p, "sh", "-c", script); code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("work in the workspace failed (exit %d): %s", code, out)
	}
	if log := f.git(t, "log", "--format=%s"); log != "second\nfirst\n" {
		t.Errorf("git log after the sandboxed commit = %q", log)
	}
}

// TestNamespaceOnlyForReadOnlyPaths: the command runs in a mount
// namespace of its own only when the policy has read-only paths that
// exist.
func TestNamespaceOnlyForReadOnlyPaths(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newFixture(t)
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(f.ws, "protected")
	if err := os.WriteFile(existing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(f.ws, "missing")
	tests := []struct {
		name     string
		readOnly []string
		want     bool
	}{
		{"no read-only paths", nil, false},
		{"only missing read-only paths", []string{missing}, false},
		{"an existing read-only path", []string{missing, existing}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ReadOnly: tt.readOnly}
			out, code := f.run(t, p, "readlink", "/proc/self/ns/mnt")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
			if got := strings.TrimSpace(out) != own; got != tt.want {
				t.Errorf("own mount namespace = %v (%s, the test's is %s), want %v", got, strings.TrimSpace(out), own, tt.want)
			}
		})
	}
}

// TestGroupKillEndsBothStages: a kill of the process group, as grub ends
// a command, ends both launcher stages and everything the command
// started. Killing the first stage alone ends the second (Pdeathsig),
// which is the command: what the command started outlives it, as it would
// outlive a launcher without namespaces, until the group is killed.
func TestGroupKillEndsBothStages(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	for _, tt := range []struct {
		name  string
		group bool
		sig   syscall.Signal
	}{
		{"SIGTERM to the group", true, syscall.SIGTERM},
		{"SIGKILL to the first stage", false, syscall.SIGKILL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newRepoFixture(t)
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			full := Wrap(self, f.p, []string{"sh", "-c", "echo ready; sleep 100; echo survived"})
			cmd := exec.Command(full[0], full[1:]...)
			cmd.Dir, cmd.Env = f.ws, f.env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pgid := cmd.Process.Pid
			defer syscall.Kill(-pgid, syscall.SIGKILL)
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if line != "ready\n" {
				t.Fatalf("the command said %q", line)
			}
			// The shell forks sleep after it says ready.
			var members map[int]int
			var second int
			for deadline := time.Now().Add(5 * time.Second); len(members) < 3 || second == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("processes in the group: %v; want the two stages and the command's child", members)
				}
				members = groupMembers(pgid)
				for pid, ppid := range members {
					if ppid == pgid {
						second = pid
					}
				}
			}
			target := pgid
			if tt.group {
				target = -pgid
			}
			if err := syscall.Kill(target, tt.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != tt.sig {
				t.Errorf("the launcher ended with %v, want killed by %v", cmd.ProcessState, tt.sig)
			}
			gone := func() bool {
				left := groupMembers(pgid)
				if !tt.group {
					_, alive := left[second]
					return !alive
				}
				return len(left) == 0
			}
			for deadline := time.Now().Add(5 * time.Second); !gone(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("processes left in the group: %v (second stage %d)", groupMembers(pgid), second)
				}
			}
		})
	}
}

// groupMembers maps the live processes (zombies aside) of process group
// pgid to their parents, from /proc.
func groupMembers(pgid int) map[int]int {
	entries, _ := os.ReadDir("/proc")
	out := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		out[pid], _ = strconv.Atoi(fields[1])
	}
	return out
}

func TestPins(t *testing.T) {
	got := pins("/w/", []string{"/w/.git/hooks", "/w/.git/config", "/w/.grub/t1/state.json", "/w/top", "/elsewhere/x.cfg", "/w2/y"})
	want := []string{"/w", "/w/.git", "/w/.grub", "/w/.grub/t1"}
	if !slices.Equal(got, want) {
		t.Errorf("pins = %q, want %q", got, want)
	}
}

// A read-only path outside the workspace under a writable folder (grub's
// private folder under $XDG_STATE_HOME in /tmp) gets each folder above it
// that a command could rename pinned, so that it cannot be moved aside
// and replaced; folders whose parent is not writable are left alone.
func TestPinsOutsideTheWorkspace(t *testing.T) {
	got := outsidePins([]string{"/w", "/tmp", "/dev/null"}, []string{"/tmp/xdg/grub", "/home/u/.local/state/grub", "/w/.git/config"})
	want := []string{"/tmp/xdg", "/w/.git"}
	if !slices.Equal(got, want) {
		t.Errorf("outsidePins = %q, want %q", got, want)
	}
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", Writable: []string{"/s"}}
	all := pinsFor(p, []string{"/s/a/b/grub", "/w/.git/config"})
	for _, dir := range []string{"/w", "/w/.git", "/s/a", "/s/a/b"} {
		if !slices.Contains(all, dir) {
			t.Errorf("pinsFor = %q, want %s in it", all, dir)
		}
	}
	if slices.Contains(all, "/s") || slices.Contains(all, "/s/a/b/grub") {
		t.Errorf("pinsFor = %q pins a folder no command can rename, or the read-only path itself", all)
	}
}

// TestReadOnlyFolderUnderTemp: grub's private folder (the task's control
// channel) lies outside the workspace, but $XDG_STATE_HOME may put it in
// the temp directory, which commands may write. As a read-only path it
// can be neither written nor replaced: not by moving the folder itself
// or one above it aside and making a new one in its place.
func TestReadOnlyFolderUnderTemp(t *testing.T) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newFixture(t)
	req := `{"version":1,"requests":[{"kind":"hooks","at":"2026-01-02T03:04:05Z","hooks":{"onTurn":"touch /tmp/pwned"}}]}`
	for i, tc := range []struct{ name, script string }{
		{"write control.json", `echo '$REQ' > $TASK/control.json`},
		{"new task folder", `mkdir $PRIV/tasks/deadbeef-k`},
		{"move it aside", `mv $PRIV $PRIV.old && mkdir -p $TASK && echo '$REQ' > $TASK/control.json`},
		{"move its parent", `mv $STATE $STATE.old && mkdir -p $TASK && echo '$REQ' > $TASK/control.json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(f.tmp, strconv.Itoa(i), "state")
			priv := filepath.Join(state, "grub")
			task := filepath.Join(priv, "tasks", "0a1b2c3d-k")
			if err := os.MkdirAll(task, 0o700); err != nil {
				t.Fatal(err)
			}
			p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, ReadOnly: ProtectedPaths(f.ws, nil, []string{priv})}
			script := strings.NewReplacer("$REQ", req, "$TASK", task, "$PRIV", priv, "$STATE", state).Replace(tc.script)
			if out, code := f.run(t, p, "sh", "-c", script); code == 0 {
				t.Errorf("the command succeeded: %s", out)
			}
			if _, err := os.Lstat(filepath.Join(task, "control.json")); err == nil {
				t.Error("a control.json is in the private folder")
			}
			if _, err := os.Lstat(filepath.Join(priv, "tasks", "deadbeef-k")); err == nil {
				t.Error("a task folder was made in the private folder")
			}
		})
	}
}
