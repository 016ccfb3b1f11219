// Command launch times one sandboxed launch of `true` through grub's
// launcher against `sh -c true`, for bench/all.sh: the four are run in
// turn RUNS times (paired, so that the machine's drift hits them alike),
// and each one's best and median wall time are printed in ms, with the
// median of the per-round ratios to sh:
//
//	go run ./bench/launch -grub ./grub -n 50 DIR
//
// DIR becomes the workspace, with a .git folder (read-only for the
// command, as in a task) and a home folder holding ~/.ssh and ~/.netrc
// (hidden). The launches:
//
//	landlock   Landlock alone (no path to protect or hide): one Go start
//	two-stage  Wrap's command line: the launcher starts itself again in a
//	           new user and mount namespace (two Go starts)
//	one-stage  as grub starts it (sandbox.InNamespace): directly in the
//	           namespaces, one Go start that mounts, restricts and execs
//	netns      one-stage with --no-network: a network namespace of its
//	           own too (CLONE_NEWNET), its loopback brought up
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/grub-dev/grub/internal/sandbox"
)

func main() {
	grub := flag.String("grub", "grub", "grub's executable")
	n := flag.Int("n", 50, "rounds")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: launch [-grub PATH] [-n RUNS] DIR")
		os.Exit(2)
	}
	if err := run(*grub, *n, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(1)
	}
}

type launch struct {
	name string
	argv []string
	attr *syscall.SysProcAttr
	ms   []float64
}

func run(grub string, n int, dir string) error {
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte("x\n"), 0o600); err != nil {
		return err
	}
	os.Setenv("HOME", home)
	if ok, why := sandbox.Namespaces(); !ok {
		return fmt.Errorf("no namespaces here: %s", why)
	}
	plain := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: ws}
	full := plain
	full.ReadOnly, full.Hide = []string{filepath.Join(ws, ".git")}, sandbox.CredentialPaths(home)
	wrapped, attr, ok := sandbox.InNamespace(grub, full, []string{"true"})
	if !ok {
		return fmt.Errorf("the launcher would not start in namespaces")
	}
	attr.Setpgid = true
	offline := full
	offline.NoNetwork, offline.NetNamespace = true, true
	if ok, why := sandbox.NetNamespaces(); !ok {
		return fmt.Errorf("no network namespaces here: %s", why)
	}
	netWrapped, netAttr, ok := sandbox.InNamespace(grub, offline, []string{"true"})
	if !ok {
		return fmt.Errorf("the launcher would not start in a network namespace")
	}
	netAttr.Setpgid = true
	all := []*launch{
		{name: "sh", argv: []string{"sh", "-c", "true"}},
		{name: "landlock", argv: sandbox.Wrap(grub, plain, []string{"true"})},
		{name: "two-stage", argv: sandbox.Wrap(grub, full, []string{"true"})},
		{name: "one-stage", argv: wrapped, attr: attr},
		{name: "netns", argv: netWrapped, attr: netAttr},
	}
	for i := -1; i < n; i++ { // a warm-up round first
		for _, l := range all {
			cmd := exec.Command(l.argv[0], l.argv[1:]...)
			cmd.Dir, cmd.SysProcAttr = ws, l.attr
			if l.attr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			}
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				return fmt.Errorf("%s: %v %s", l.name, err, out)
			}
			if i >= 0 {
				l.ms = append(l.ms, float64(time.Since(start).Microseconds())/1000)
			}
		}
	}
	sh := all[0].ms
	for _, l := range all {
		ratios := make([]float64, len(l.ms))
		for i := range l.ms {
			ratios[i] = l.ms[i] / sh[i]
		}
		fmt.Printf("%s best-ms %.2f median-ms %.2f ratio %.1f\n", l.name, slices.Min(l.ms), median(l.ms), median(ratios))
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
