package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/grub-dev/grub/harness"
	"github.com/grub-dev/grub/internal/sandbox"
)

// Factory holds what commands need from the outside world. Commands copy
// the functions they use into their Options, so that a test can replace any
// of them.
type Factory struct {
	IO *IOStreams

	// WorkDir is the workspace root as given by -C/--workdir; empty means
	// the current directory. Read it through Root, after flag parsing.
	WorkDir string

	// Now is the clock.
	Now func() time.Time
	// Getenv reads the environment.
	Getenv func(string) string
	// OpenStore opens the harness store of a workspace root.
	OpenStore func(root string) (*harness.Store, error)
	// Landlock probes the kernel's Landlock ABI (sandbox.Supported).
	Landlock func() (abi int, ok bool)
	// Reap makes a run's grub a child subreaper that ends what each turn
	// leaves behind. Only the real process (Main) sets it: in a test
	// process it would end other tests' children.
	Reap bool
	// Args are the command line's arguments (without the program name),
	// which --detach starts the runner with again.
	Args []string
	// Detached is where a detached runner reports that it runs (Main,
	// from $GRUB_DETACH_FD; detach.go); nil in any other grub.
	Detached *os.File
}

// NewFactory returns a Factory wired to the real process: the system clock,
// the process environment and the harness store on disk.
func NewFactory(ios *IOStreams) *Factory {
	return &Factory{
		IO:        ios,
		Now:       time.Now,
		Getenv:    os.Getenv,
		OpenStore: harness.Open,
		Landlock:  sandbox.Supported,
	}
}

// Root returns the absolute workspace root: -C/--workdir when given,
// otherwise the current directory. A root that is not a directory is a
// usage error.
func (f *Factory) Root() (string, error) {
	dir := f.WorkDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("cannot read the current directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &UsageError{Err: fmt.Errorf("-C %s: %w", dir, err)}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", &UsageError{Err: fmt.Errorf("-C %s: no such directory; pass the project folder that holds .grub/", dir)}
	}
	if !fi.IsDir() {
		return "", &UsageError{Err: fmt.Errorf("-C %s: not a directory; pass the project folder that holds .grub/", dir)}
	}
	return abs, nil
}

// Store opens the harness store of the workspace root.
func (f *Factory) Store() (*harness.Store, error) {
	root, err := f.Root()
	if err != nil {
		return nil, err
	}
	s, err := f.OpenStore(root)
	if err == nil && f.Getenv != nil {
		s.Host = f.Getenv("GRUB_HOSTNAME") // a CI runner's stable name; tests play a second machine
		s.Private = harness.PrivateRoot(f.Getenv)
	}
	return s, err
}
