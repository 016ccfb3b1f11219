package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/grub-dev/grub/internal/atomicfile"
)

// Trust: settings that run programs as the user, weaken the sandbox or
// send the API key elsewhere apply only when the user trusted them.
//
// A workspace's .grub/config.toml is trusted by its exact content: the
// user's TrustList (a file next to the user's config.toml) records the
// file's absolute path and the SHA-256 of the bytes trusted; a changed
// file is no longer trusted, as with mise and direnv.
//
// A task is trusted by its settings: whenever this user's grub creates a
// task or changes its settings, it records a digest of the settings that
// need trust (TaskTrustSettings) in the task's private folder, outside the
// workspace. A task whose state came from elsewhere (a clone, a copied
// folder, a state.json planted by a turn) has no such record, or another
// digest, and is refused by resume until the user trusts it.

// FileWorkspaceConfig is the workspace's defaults file in grub's folder
// (.grub/config.toml). Only the user writes it: a turn that creates,
// changes or deletes it is an illegal edit (SnapshotConfig).
const FileWorkspaceConfig = "config.toml"

// fileTaskTrust holds, in a task's private folder, the digest of the
// settings the user trusted.
const fileTaskTrust = "trusted-settings"

// WorkspaceConfigPath is the absolute path of the workspace's
// .grub/config.toml.
func (s *Store) WorkspaceConfigPath() string {
	return filepath.Join(s.Root, GrubDirName, FileWorkspaceConfig)
}

// TrustList is the user's record of the workspace config files trusted,
// one JSON object a line: {"path": "/abs/.grub/config.toml", "sha256":
// "…"}. Writers hold an flock on Path+".lock" and replace the file
// atomically, so two grub config trust at once both land.
type TrustList struct {
	Path string
}

type trustEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Trusted reports whether file (an absolute path) is recorded with the
// digest sum. A missing list trusts nothing.
func (t TrustList) Trusted(file, sum string) (bool, error) {
	entries, err := t.read()
	if err != nil {
		return false, err
	}
	return slices.Contains(entries, trustEntry{Path: file, SHA256: sum}), nil
}

// Trust records file with digest sum, replacing what the list held for
// file.
func (t TrustList) Trust(file, sum string) error {
	return t.update(func(entries []trustEntry) []trustEntry {
		entries = slices.DeleteFunc(entries, func(e trustEntry) bool { return e.Path == file })
		return append(entries, trustEntry{Path: file, SHA256: sum})
	})
}

// Untrust removes file from the list and reports whether it was there.
func (t TrustList) Untrust(file string) (bool, error) {
	found := false
	err := t.update(func(entries []trustEntry) []trustEntry {
		n := len(entries)
		entries = slices.DeleteFunc(entries, func(e trustEntry) bool { return e.Path == file })
		found = len(entries) < n
		return entries
	})
	return found, err
}

func (t TrustList) read() ([]trustEntry, error) {
	data, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the trusted files list: %w", err)
	}
	var entries []trustEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e trustEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Path != "" && e.SHA256 != "" {
			entries = append(entries, e) // a line that is not one is dropped: it trusts nothing
		}
	}
	return entries, sc.Err()
}

func (t TrustList) update(change func([]trustEntry) []trustEntry) (err error) {
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o700); err != nil {
		return fmt.Errorf("the trusted files list: %w", err)
	}
	lf, err := os.OpenFile(t.Path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("the trusted files list: %w", err)
	}
	defer lf.Close()
	if err := lockWait(lf); err != nil {
		return fmt.Errorf("the trusted files list: lock: %w", err)
	}
	defer func() {
		if uerr := unlock(lf); uerr != nil && err == nil {
			err = uerr
		}
	}()
	entries, err := t.read()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, e := range change(entries) {
		line, _ := json.Marshal(e)
		b.Write(append(line, '\n'))
	}
	return atomicfile.WriteFile(t.Path, b.Bytes(), 0o600)
}

// TrustSetting is one setting of a task that needs the user's trust: the
// name of its flag and its value, as grub shows them.
type TrustSetting struct {
	Key, Value string
}

func (t TrustSetting) String() string { return t.Key + " " + t.Value }

// TaskTrustSettings are the settings of st that run programs as the user,
// lift the sandbox or send the API key elsewhere: hooks, a command agent's
// command, --agent-bin, --agent-args, --base-url, the sandbox off (by
// --sandbox off, or by the default of claude and codex), --sandbox-allow
// paths outside the workspace (those inside it commands may write anyway),
// --pass-env and --sandbox-show (it lets commands read credentials). A task with none resumes anywhere.
func (s *Store) TaskTrustSettings(st *State) []TrustSetting {
	var out []TrustSetting
	add := func(key, value string) {
		if value != "" {
			out = append(out, TrustSetting{key, value})
		}
	}
	a, sb := st.Agent, st.Sandbox
	add("on-turn", st.Hooks.OnTurn)
	add("on-stop", st.Hooks.OnStop)
	if a.Kind == AgentCommand {
		add("agent-cmd", a.Command)
	}
	add("agent-bin", a.Bin)
	if len(a.Args) > 0 {
		add("agent-args", strings.Join(a.Args, " "))
	}
	if a.Kind == AgentOpenAI {
		add("base-url", a.BaseURL)
	}
	switch {
	case sb.Mode == "off":
		add("sandbox", "off")
	case sb.Mode == "" && (a.Kind == AgentClaude || a.Kind == AgentCodex):
		add("sandbox", "off (the default of --agent "+string(a.Kind)+")")
	}
	for _, p := range sb.Allow {
		if rel, err := filepath.Rel(s.Root, s.ResolvePath(p)); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			add("sandbox-allow", p) // outside the workspace, "../x" included
		}
	}
	if sb.AllowGit {
		add("sandbox-allow-git", "true")
	}
	for _, n := range sb.PassEnv {
		add("pass-env", n)
	}
	for _, p := range sb.Show {
		add("sandbox-show", p)
	}
	return out
}

// trustDigest is the digest of every setting of st that shapes what its
// turns may do (the agent, the sandbox, the hooks), in the form state.json
// stores them: a record names them all, so a change behind grub's back
// (--no-network turned off in a state.json someone wrote) is seen even
// where no single setting needs trust.
func (s *Store) trustDigest(st *State) string {
	sb := st.Sandbox
	sb.ModeFrom = ""
	sb.Allow = s.relativePaths(sb.Allow)
	sb.Hide, sb.Show = s.relativePaths(sb.Hide), s.relativePaths(sb.Show)
	data, _ := json.Marshal(struct {
		Agent   Agent
		Sandbox Sandbox
		Hooks   Hooks
	}{st.Agent, sb, st.Hooks})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TrustTask records st's settings as this user's, in the task's private
// folder: grub calls it whenever it creates a task or changes its
// settings. Without a private folder only a task with no setting that
// needs trust can do without the record.
func (s *Store) TrustTask(st *State) error {
	dir, err := s.PrivateDir(st.ID)
	if errors.Is(err, ErrNoPrivate) && len(s.TaskTrustSettings(st)) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, fileTaskTrust), []byte(s.trustDigest(st)+"\n"), 0o600)
}

// UntrustTask removes the task's trust record, if any.
func (s *Store) UntrustTask(id string) error {
	dir, err := s.PrivateDir(id)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, fileTaskTrust)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// TaskTrust is whether a task's settings may run.
type TaskTrust int

const (
	// Trusted: the settings are the ones this user's grub last recorded,
	// or there is no record and none of them needs trust.
	Trusted TaskTrust = iota
	// Foreign: no record here, and settings that need trust (a clone, a
	// copied folder, a planted state.json).
	Foreign
	// Changed: the settings differ from the ones recorded here.
	Changed
)

// TaskTrusted says whether st's settings may run here (TaskTrust).
func (s *Store) TaskTrusted(st *State) (TaskTrust, error) {
	none := len(s.TaskTrustSettings(st)) == 0
	dir, err := s.PrivateDir(st.ID)
	if errors.Is(err, ErrNoPrivate) && none {
		return Trusted, nil
	}
	if err != nil {
		return Foreign, err
	}
	data, err := os.ReadFile(filepath.Join(dir, fileTaskTrust))
	switch {
	case errors.Is(err, fs.ErrNotExist) && none:
		return Trusted, nil
	case errors.Is(err, fs.ErrNotExist):
		return Foreign, nil
	case err != nil:
		return Foreign, err
	case strings.TrimSpace(string(data)) == s.trustDigest(st):
		return Trusted, nil
	}
	return Changed, nil
}
