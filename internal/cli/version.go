package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/sandbox"
	"github.com/grub-dev/grub/schemas"
	"github.com/spf13/cobra"
)

// Version, Commit and Date describe the build. Release builds and make
// build set them with
//
//	go build -ldflags "-X github.com/grub-dev/grub/internal/cli.Version=v1.2.3 \
//	  -X github.com/grub-dev/grub/internal/cli.Commit=<sha> \
//	  -X github.com/grub-dev/grub/internal/cli.Date=2026-12-02T10:00:00Z \
//	  -X github.com/grub-dev/grub/internal/cli.Modified=true" ./cmd/grub
//
// Left empty (or Version at "dev"), they come from what the Go toolchain
// recorded in the binary: the module version go install saw, and the
// commit, its date and whether the work tree had changes (go build in a
// git checkout).
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
	// Modified is "true" when the stamped build's work tree had changes.
	Modified = ""
)

// buildInfo is what grub version prints (schemas/version-output.schema.json).
type buildInfo struct {
	Version  string          `json:"version"`
	Commit   string          `json:"commit"`
	Date     string          `json:"date"`
	Modified bool            `json:"modified"`
	Go       string          `json:"go"`
	OS       string          `json:"os"`
	Arch     string          `json:"arch"`
	Sandbox  sandboxFeatures `json:"sandbox"`
}

// sandboxFeatures is what grub's sandbox can use on this machine.
type sandboxFeatures struct {
	LandlockABI       int    `json:"landlockABI"`
	Namespaces        bool   `json:"namespaces"`
	NamespacesMissing string `json:"namespacesMissing,omitempty"`
}

// readBuildInfo fills a buildInfo from the ldflags variables, else from
// the toolchain's record in the binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: Version, Commit: Commit, Date: Date, Modified: Modified == "true", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	// A release tool that could not read git stamps "none" and the zero
	// time: that is no commit.
	if b.Commit == "none" {
		b.Commit = ""
	}
	if strings.HasPrefix(b.Date, "0001-") {
		b.Date = ""
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	stamped := b.Commit != ""
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && !stamped:
			b.Commit = s.Value
		case s.Key == "vcs.time" && !stamped:
			b.Date = s.Value
		case s.Key == "vcs.modified" && !stamped:
			b.Modified = s.Value == "true"
		}
	}
	if t, err := time.Parse(time.RFC3339, b.Date); err == nil {
		b.Date = t.UTC().Format(time.RFC3339)
	}
	return b
}

// versionString is the version line without the program name, e.g.
// "v1.2.3 (commit 0a1b2c3d4e5f, 2026-12-02; go1.26.0 linux/amd64)".
func versionString() string {
	b := readBuildInfo()
	build := ""
	if b.Commit != "" {
		build = "commit " + shortCommit(b.Commit)
		if b.Modified {
			build += "+changes"
		}
		if len(b.Date) >= 10 {
			build += ", " + b.Date[:10]
		}
		build += "; "
	}
	return fmt.Sprintf("%s (%s%s %s/%s)", b.Version, build, b.Go, b.OS, b.Arch)
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// VersionOptions are the inputs of grub version.
type VersionOptions struct {
	IO       *IOStreams
	JSON     bool
	Landlock func() (int, bool)
	// Namespaces probes user and mount namespaces (sandbox.Namespaces).
	Namespaces func() (bool, string)
}

// NewCmdVersion builds grub version. runF, when not nil, replaces the run
// function (tests use it to check flag parsing).
func NewCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Landlock: f.Landlock, Namespaces: sandbox.Namespaces}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print grub's version, its build, and what its sandbox can use here",
		Long: `Print grub's version, the commit and date it was built from, the Go
version, and what grub's sandbox can use on this machine (the kernel's
Landlock ABI, and whether user and mount namespaces work), on stdout.

A build from a git checkout records its commit; "+changes" says its work
tree had uncommitted changes. Include this output when you report a bug.

--json prints one object (schemas/version-output.schema.json).`,
		Example: `  grub version
  grub version --json
  grub --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON object")
	return cmd
}

func versionRun(opts *VersionOptions) error {
	b := readBuildInfo()
	if abi, ok := opts.Landlock(); ok {
		b.Sandbox.LandlockABI = abi
	}
	b.Sandbox.Namespaces, b.Sandbox.NamespacesMissing = opts.Namespaces()
	if opts.JSON {
		return writeJSON(opts.IO.Out, schemas.VersionOutput, b)
	}
	if _, err := fmt.Fprintf(opts.IO.Out, "grub %s\n", versionString()); err != nil {
		return err
	}
	landlock := "not available"
	if b.Sandbox.LandlockABI > 0 {
		landlock = fmt.Sprintf("ABI %d", b.Sandbox.LandlockABI)
	}
	ns := "available"
	if !b.Sandbox.Namespaces {
		ns = "not available (" + b.Sandbox.NamespacesMissing + ")"
	}
	_, err := fmt.Fprintf(opts.IO.Out, "sandbox: Landlock %s; user and mount namespaces %s\n", landlock, ns)
	return err
}
