package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is grub's version. Release builds set it with
//
//	go build -ldflags "-X github.com/grub-dev/grub/internal/cli.Version=v1.2.3" ./cmd/grub
//
// When it is left at "dev", the module version recorded by go install
// (if any) is used instead.
var Version = "dev"

// versionString is the version line without the program name, e.g.
// "v1.2.3 (go1.26.0 linux/amd64)".
func versionString() string {
	v := Version
	if v == "dev" {
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	return fmt.Sprintf("%s (%s %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// VersionOptions are the inputs of grub version.
type VersionOptions struct {
	IO *IOStreams
}

// NewCmdVersion builds grub version. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "version",
		Short: "Print grub's version and the Go version it was built with",
		Long: `Print grub's version and the Go version it was built with, on stdout.

Include this line when you report a bug.`,
		Example: `  grub version
  grub --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	_, err := fmt.Fprintf(opts.IO.Out, "grub %s\n", versionString())
	return err
}
