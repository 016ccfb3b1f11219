package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// Landlock ABI versions the policies need.
const (
	// MinABIFilesystem is the first Landlock ABI that restricts writes.
	MinABIFilesystem = 1
	// MinABINetwork is the first Landlock ABI that restricts TCP.
	MinABINetwork = 4
	// abiTruncate is the first ABI that restricts truncate(2); below it a
	// command can still truncate a file it could not otherwise write.
	abiTruncate = 3
	// MinABIScope is the first ABI with scopes: a sandboxed command can
	// then no longer signal grub (or any process outside the sandbox)
	// nor connect to an abstract Unix socket outside it.
	MinABIScope = 6
)

// ErrUnavailable is wrapped by the error Resolve returns when the policy
// asked for explicitly cannot be enforced on this system. It is a usage
// error: the user asked for something this machine cannot do.
var ErrUnavailable = errors.New("not available on this system")

// Resolve decides the policy to run commands with on this system.
// explicitMode says the mode came from the user (--sandbox or the
// config) rather than being the default; NoNetwork is always explicit.
//
// Where Landlock is missing, a default mode degrades to off and warning
// says so, once, for the caller to print; an explicit confining mode, or
// NoNetwork without Landlock ABI 4, is an error wrapping ErrUnavailable.
// warning also notes a known gap of an old ABI that is still enforced,
// and what cutting the network cannot do on this kernel (networkGaps).
//
// Where user and mount namespaces are not available (Namespaces), a
// policy with ReadOnly paths loses them and warning says so: those paths
// are then guarded by the referee's check only. So does one with paths to
// Hide, and warning names those that exist: they stay readable.
func Resolve(p Policy, explicitMode bool) (resolved Policy, warning string, err error) {
	abi, _ := Supported()
	resolved, warning, err = ResolveABI(p, explicitMode, abi)
	if err == nil && len(resolved.ReadOnly)+len(resolved.Hide) > 0 && resolved.Confines() {
		resolved, warning = withoutNamespaces(resolved, warning, Namespaces)
	}
	return resolved, warning, err
}

// withoutNamespaces drops p.ReadOnly and p.Hide (and Show), adding why to
// warning, and the credentials that stay readable, when probe says
// namespaces are not available.
func withoutNamespaces(p Policy, warning string, probe func() (bool, string)) (Policy, string) {
	ok, why := probe()
	if ok {
		return p, warning
	}
	readable := Hidden(p)
	p.ReadOnly, p.Hide, p.Show = nil, nil, nil
	if warning != "" {
		warning += "; "
	}
	warning += why
	if len(readable) > 0 {
		warning += "; sandboxed commands can read " + strings.Join(readable, " ")
	}
	return p, warning
}

// ResolveABI is Resolve for a kernel offering Landlock ABI abi (0: none),
// for callers that probe the kernel themselves or simulate another one.
// It probes the kernel's seccomp itself (FilterSupported): warning also
// says what cutting the network cannot do here (networkGaps).
func ResolveABI(p Policy, explicitMode bool, abi int) (resolved Policy, warning string, err error) {
	resolved, warning, err = resolve(p, explicitMode, abi)
	if err != nil {
		return resolved, warning, err
	}
	ok, why := FilterSupported()
	return resolved, joinWarnings(warning, networkGaps(resolved, abi, ok, why)), nil
}

// joinWarnings joins the parts of a warning that are not empty.
func joinWarnings(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

func resolve(p Policy, explicitMode bool, abi int) (Policy, string, error) {
	if err := p.Validate(); err != nil {
		return p, "", err
	}
	var warning string
	if p.Mode != ModeOff && abi < MinABIFilesystem {
		if explicitMode {
			return p, "", fmt.Errorf("--sandbox=%s needs Landlock (Linux 5.13 or later, enabled at boot): %w", p.Mode, ErrUnavailable)
		}
		warning = fmt.Sprintf("Landlock is not available here (%s); commands run without a sandbox, as with --sandbox=off", landlockMissing())
		p.Mode = ModeOff
	} else if p.Mode != ModeOff && abi < abiTruncate {
		warning = fmt.Sprintf("Landlock ABI %d cannot stop truncate(2) on files outside the writable paths (ABI 3, Linux 6.2, can)", abi)
	}
	if p.Confines() && abi >= MinABIFilesystem && abi < MinABIScope {
		if warning != "" {
			warning += "; "
		}
		warning += fmt.Sprintf("Landlock ABI %d cannot stop sandboxed commands from signalling grub (a kill -STOP hangs the run) or reaching abstract Unix sockets (ABI 6, Linux 6.12, can)", abi)
	}
	if p.NoNetwork && abi < MinABINetwork {
		return p, warning, fmt.Errorf("--no-network needs Landlock ABI %d (Linux 6.7 or later); this system has %s: %w", MinABINetwork, abiName(abi), ErrUnavailable)
	}
	if p.ProxyPort != 0 && abi < MinABINetwork {
		return p, warning, fmt.Errorf("--allow-domain needs Landlock ABI %d (Linux 6.7 or later) to keep commands to grub's proxy; this system has %s: %w", MinABINetwork, abiName(abi), ErrUnavailable)
	}
	return p, warning, nil
}

func abiName(abi int) string {
	if abi < 1 {
		return "none"
	}
	return fmt.Sprintf("ABI %d", abi)
}
