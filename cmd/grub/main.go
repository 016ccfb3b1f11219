package main

import (
	"os"

	"github.com/grub-dev/grub/internal/cli"
	// The sandbox launcher runs from this package's initialiser, before
	// the rest of grub initialises (see its doc).
	_ "github.com/grub-dev/grub/internal/sandbox/launch"
)

func main() { os.Exit(cli.Main()) }
