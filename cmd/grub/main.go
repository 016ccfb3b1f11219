package main

import (
	"os"

	"github.com/grub-dev/grub/internal/cli"
)

func main() { os.Exit(cli.Main()) }
