package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
)

// ExecCommand is the hidden subcommand of grub that runs the launcher:
// `grub __sandbox-exec [policy flags] -- command [args...]`. grub's
// command line must hand everything after it to [Main] untouched.
const ExecCommand = "__sandbox-exec"

// Exit codes of the launcher when it cannot run the command, as a shell
// would report them. Once the command runs, its own exit code is the
// launcher's (exec replaces the launcher).
const (
	// ExitCannotRun: a bad policy, a restriction that failed or a
	// command that is not executable.
	ExitCannotRun = 126
	// ExitNotFound: the command is not in PATH.
	ExitNotFound = 127
)

// Wrap returns the command line that runs argv under p: grub's own
// executable self (from os.Executable) with the hidden subcommand, the
// policy as flags, "--" and argv. For a policy that confines nothing (mode
// off without NoNetwork or ProxyPort) it returns a copy of argv unchanged.
//
// The launcher works out the writable paths from its own environment,
// which is the command's: the caller sets the command's environment
// (ScrubEnv, HOME, TMPDIR, GOCACHE) on the launcher's process.
func Wrap(self string, p Policy, argv []string) []string {
	if !p.Confines() {
		return slices.Clone(argv)
	}
	out := []string{self, ExecCommand, "--mode=" + string(p.Mode)}
	if p.Workspace != "" {
		out = append(out, "--workspace="+p.Workspace)
	}
	for _, w := range p.Writable {
		out = append(out, "--allow="+w)
	}
	if p.NoNetwork {
		out = append(out, "--no-network")
	}
	if p.ProxyPort != 0 {
		out = append(out, "--proxy-port="+strconv.Itoa(p.ProxyPort))
	}
	if p.NetNamespace {
		out = append(out, "--net-namespace")
	}
	for _, r := range p.ReadOnly {
		out = append(out, "--ro="+r)
	}
	for _, h := range p.Hide {
		out = append(out, "--hide="+h)
	}
	for _, s := range p.Show {
		out = append(out, "--show="+s)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// Main is the launcher, run by grub's hidden subcommand with the
// arguments that follow it: it parses the policy Wrap wrote, restricts
// its own process with Landlock, and execs the command (looked up in
// PATH) in its place, with the environment it was given. It returns only
// when it could not run the command: the message is on stderr, the exit
// code ExitCannotRun or ExitNotFound. It never runs a command with less
// Landlock confinement than the policy asks for.
//
// When the policy lists read-only or hidden paths that exist, the
// launcher works in a user and mount namespace of its own: it makes the
// read-only paths read-only bind mounts and covers the hidden ones, then
// restricts itself and execs the command. grub starts it in them
// (InNamespace); started outside them, it runs in two stages: the first
// starts the second in new namespaces and ends as it ends. Where the
// namespace cannot be made, the first stage says so in one line on stderr
// and goes on without it (the referee's check still guards the paths).
func Main(args []string) int { return launch(args, os.Stderr) }

// nsStage marks a launcher started in its own namespaces. Wrap never
// writes it; InNamespace and the first stage put it before the policy
// flags.
const nsStage = "--in-namespace"

func launch(args []string, stderr io.Writer) int {
	staged := len(args) > 0 && args[0] == nsStage
	if staged {
		args = args[1:]
	}
	p, argv, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "grub %s: %v\n", ExecCommand, err)
		return ExitCannotRun
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "grub %s: %v\n", ExecCommand, err)
		if errors.Is(err, exec.ErrNotFound) {
			return ExitNotFound
		}
		return ExitCannotRun
	}
	if !staged && (needsNamespace(p) || p.NetNamespace) {
		err := runStaged(p, args) // returns only when it could not start
		fmt.Fprintf(stderr, "grub %s: warning: no user and mount namespace (%v); the read-only paths are guarded by the referee's check only, and the hidden paths stay readable%s\n", ExecCommand, err, netnsMissing(p))
	}
	// Before protect, which drops the capability it needs.
	ownNet, err := joinNetwork(p, staged, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "grub %s: cannot set up the network namespace (%s): %v\n", ExecCommand, describe(p), err)
		return ExitCannotRun
	}
	if staged {
		// Capabilities belong to a thread: the one that drops them
		// must be the one that execs.
		runtime.LockOSThread()
		protect(p, stderr)
	}
	if err := enforce(p, ownNet); err != nil {
		fmt.Fprintf(stderr, "grub %s: cannot apply the sandbox (%s): %v\n", ExecCommand, describe(p), err)
		return ExitCannotRun
	}
	if err := applySeccomp(p, ownNet); err != nil {
		fmt.Fprintf(stderr, "grub %s: cannot apply the sandbox (%s): %v\n", ExecCommand, describe(p), err)
		return ExitCannotRun
	}
	err = execve(path, argv, os.Environ())
	fmt.Fprintf(stderr, "grub %s: run %s: %v\n", ExecCommand, argv[0], err)
	return ExitCannotRun
}

// parseArgs reads the flags Wrap writes and the command after them.
func parseArgs(args []string) (Policy, []string, error) {
	var p Policy
	fs := flag.NewFlagSet(ExecCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Func("mode", "sandbox mode", func(s string) error {
		m, err := ParseMode(s)
		p.Mode = m
		return err
	})
	fs.StringVar(&p.Workspace, "workspace", "", "workspace")
	fs.Func("allow", "extra writable path", func(s string) error {
		p.Writable = append(p.Writable, s)
		return nil
	})
	fs.BoolVar(&p.NoNetwork, "no-network", false, "refuse TCP connect and bind")
	fs.IntVar(&p.ProxyPort, "proxy-port", 0, "refuse TCP connect but to this port")
	fs.BoolVar(&p.NetNamespace, "net-namespace", false, "run in a network namespace of its own")
	fs.Func("ro", "read-only path", func(s string) error {
		p.ReadOnly = append(p.ReadOnly, s)
		return nil
	})
	fs.Func("hide", "path to hide", func(s string) error {
		p.Hide = append(p.Hide, s)
		return nil
	})
	fs.Func("show", "path to let through", func(s string) error {
		p.Show = append(p.Show, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return p, nil, fmt.Errorf("bad sandbox policy: %w", err)
	}
	if p.Mode == "" {
		return p, nil, errors.New("bad sandbox policy: no --mode")
	}
	if err := p.Validate(); err != nil {
		return p, nil, fmt.Errorf("bad sandbox policy: %w", err)
	}
	argv := fs.Args()
	if len(argv) == 0 || argv[0] == "" {
		return p, nil, errors.New("no command to run")
	}
	return p, argv, nil
}

// describe names a policy in messages.
func describe(p Policy) string {
	s := "mode " + string(p.Mode)
	if p.NoNetwork {
		s += ", no network"
	}
	if p.ProxyPort != 0 {
		s += ", network through the proxy on port " + strconv.Itoa(p.ProxyPort)
	}
	if p.NetNamespace {
		s += ", in a network namespace of its own"
	}
	return s
}
