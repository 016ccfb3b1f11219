package cli

import (
	"cmp"
	"slices"
	"strings"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/sandbox"
)

// sameSandbox reports whether two sandbox settings are the same.
func sameSandbox(a, b harness.Sandbox) bool {
	return a.Mode == b.Mode && a.NoNetwork == b.NoNetwork && a.AllowGit == b.AllowGit && slices.Equal(a.Allow, b.Allow) &&
		slices.Equal(a.PassEnv, b.PassEnv) && slices.Equal(a.Hide, b.Hide) && slices.Equal(a.Show, b.Show) &&
		slices.Equal(a.AllowDomains, b.AllowDomains)
}

// sandboxView is a task's sandbox as status shows it: the settings, and
// the mode they give on this system.
type sandboxView struct {
	// Mode is what the task's commands run under here: workspace-write,
	// read-only or off.
	Mode string `json:"mode"`
	// From says where the mode comes from (--sandbox, or the default).
	From      string `json:"from"`
	NoNetwork bool   `json:"noNetwork"`
	// AllowDomains is the network allowlist (--allow-domain).
	AllowDomains []string `json:"allowDomains,omitempty"`
	Allow        []string `json:"allow,omitempty"`
	PassEnv      []string `json:"passEnv,omitempty"`
	// AllowGit: sandboxed commands may write the git directory.
	AllowGit bool `json:"allowGit,omitempty"`
	// Hide and Show are the task's --sandbox-hide and --sandbox-show
	// paths (the credential locations are hidden besides).
	Hide []string `json:"hide,omitempty"`
	Show []string `json:"show,omitempty"`
	// Problem says why the next run would refuse the settings here.
	Problem string `json:"problem,omitempty"`
}

// newSandboxView resolves a task's sandbox settings on this system, with
// the command's environment (Factory.Getenv; nil: an empty one, enough
// for the mode and its origin, which the view shows and the environment
// does not change) and kernel probe.
func newSandboxView(st *harness.State, root string, getenv func(string) string, probe landlockProbe) sandboxView {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	sb := st.Sandbox
	v := sandboxView{NoNetwork: sb.NoNetwork, AllowDomains: sb.AllowDomains, Allow: sb.Allow, PassEnv: sb.PassEnv, AllowGit: sb.AllowGit,
		Hide: sb.Hide, Show: sb.Show}
	setup, err := resolveSandbox(sb, st.Agent.Kind, root, getenv, probe)
	if err != nil {
		v.Mode, v.From, v.Problem = sb.Mode, cmp.Or(sb.ModeFrom, "--sandbox"), err.Error()
		return v
	}
	v.Mode, v.From = string(setup.Policy.Mode), setup.From
	return v
}

// line is the sandbox in one line for people.
func (v sandboxView) line() string {
	s := v.Mode + " (" + v.From + ")"
	if v.NoNetwork {
		s += ", no network"
	}
	if len(v.AllowDomains) > 0 {
		s += ", network only to " + strings.Join(v.AllowDomains, " ") + " (through grub's proxy)"
	}
	if len(v.Allow) > 0 {
		s += ", also writable: " + strings.Join(v.Allow, " ")
	}
	if len(v.PassEnv) > 0 {
		s += ", passing " + strings.Join(v.PassEnv, " ")
	}
	if v.AllowGit && v.Mode != string(sandbox.ModeOff) {
		s += ", .git writable but its hooks and config (--sandbox-allow-git)"
	}
	if len(v.Hide) > 0 {
		s += ", also hidden: " + strings.Join(v.Hide, " ")
	}
	if len(v.Show) > 0 {
		s += ", shown: " + strings.Join(v.Show, " ")
	}
	if v.Problem != "" {
		s += "; the next run refuses it here: " + v.Problem
	}
	return s
}
