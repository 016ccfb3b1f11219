package sandbox

import (
	"strings"
	"testing"
)

func TestNetworkGaps(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", NoNetwork: true}
	off := Policy{Mode: ModeOff, NoNetwork: true}
	tests := []struct {
		name     string
		p        Policy
		abi      int
		filterOK bool
		want     []string // each in the warning; none: no warning
		not      string
	}{
		{"network allowed", Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"}, 7, false, nil, ""},
		{"ABI 7 refuses Unix sockets", ws, 7, true, []string{"refuses Unix sockets altogether", "Landlock ABI 7", "ssh-agent"}, ""},
		{"ABI 9 leaves them to Landlock", ws, 9, true, nil, ""},
		{"mode off on ABI 9", off, 9, true, []string{"refuses Unix sockets altogether", "--sandbox=off"}, ""},
		{"no seccomp", ws, 7, false, []string{"no seccomp network filter here (why)", "UDP", "Multipath TCP", "pathname Unix sockets"}, ""},
		{"no seccomp, ABI 9", ws, 9, false, []string{"UDP", "Multipath TCP"}, "Unix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := networkGaps(tt.p, tt.abi, tt.filterOK, "why")
			if (got == "") != (len(tt.want) == 0) {
				t.Fatalf("warning %q, want one: %v", got, len(tt.want) > 0)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q lacks %q", got, w)
				}
			}
			if tt.not != "" && strings.Contains(got, tt.not) {
				t.Errorf("warning %q names %q", got, tt.not)
			}
		})
	}
}

func TestUnixLeftToLandlock(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", NoNetwork: true}
	for _, tt := range []struct {
		p    Policy
		abi  int
		want bool
	}{
		{ws, 8, false},
		{ws, 9, true},
		{Policy{Mode: ModeOff, NoNetwork: true}, 11, false},
		{Policy{Mode: ModeReadOnly, NoNetwork: true}, 9, true},
	} {
		if got := unixLeftToLandlock(tt.p, tt.abi); got != tt.want {
			t.Errorf("unixLeftToLandlock(%s, ABI %d) = %v, want %v", describe(tt.p), tt.abi, got, tt.want)
		}
	}
}

// TestFilterFor: listen(2) is refused only where Landlock refuses every
// TCP bind (NoNetwork), AF_UNIX only where Landlock cannot refuse
// pathname connects.
func TestFilterFor(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Workspace: "/w", NoNetwork: true}
	if got := filterFor(ws, 7, true); !got.listen {
		t.Errorf("filterFor(no network, own network namespace) = %+v: a command's own servers may listen there", got)
	}
	if got := filterFor(ws, 7, false); got.listen || got.unix {
		t.Errorf("no network, ABI 7: %+v, want neither listen nor unix", got)
	}
	if got := filterFor(ws, 9, false); got.listen || !got.unix {
		t.Errorf("no network, ABI 9: %+v, want unix without listen", got)
	}
	if got := filterFor(Policy{Mode: ModeWorkspaceWrite, Workspace: "/w"}, 9, false); !got.listen || got.unix {
		t.Errorf("network allowed: %+v, want listen without unix", got)
	}
}
