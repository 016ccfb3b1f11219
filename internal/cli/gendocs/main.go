// Command gendocs writes grub's command reference: the Markdown pages of
// docs/cli (make docs) or the man pages (make man), from the commands grub
// runs (cli.WriteDocs, cli.WriteMan).
//
//	go run ./internal/cli/gendocs -md docs/cli
//	go run ./internal/cli/gendocs -man man
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/grub-dev/grub/internal/cli"
)

func main() {
	md := flag.String("md", "", "write the Markdown reference into this folder")
	man := flag.String("man", "", "write the man pages into this folder")
	flag.Parse()
	if *md == "" && *man == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gendocs [-md DIR] [-man DIR]")
		os.Exit(2)
	}
	if *md != "" {
		if err := cli.WriteDocs(*md); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
	}
	if *man != "" {
		if err := cli.WriteMan(*man); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
	}
}
