// Command grub keeps an AI coding agent working on one goal, one verified
// feature at a time. All of its behaviour lives in internal/cli; main only
// turns the result into the process's exit code.
package main

import (
	"os"

	"github.com/grub-dev/grub/internal/cli"
)

func main() { os.Exit(cli.Main()) }
