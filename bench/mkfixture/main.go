// Command mkfixture writes a grub task for the bench scripts (see package
// bench/fixture) and prints its id.
//
//	go run ./bench/mkfixture -features 2000 -log 50000000 -agent 'grub demo-agent' DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/grub-dev/grub/bench/fixture"
)

func main() {
	var o fixture.Options
	flag.IntVar(&o.Features, "features", 2000, "features in the list")
	flag.IntVar(&o.Passing, "passing", -1, "features that pass already (default: half)")
	flag.Int64Var(&o.LogBytes, "log", 0, "pad the progress log to about this many bytes")
	flag.StringVar(&o.AgentCmd, "agent", "true", "the task's agent command (command backend)")
	flag.IntVar(&o.MaxIter, "max-iter", 0, "the task's iteration limit (default: features + 10)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mkfixture [flags] DIR")
		os.Exit(2)
	}
	id, err := fixture.Write(flag.Arg(0), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkfixture:", err)
		os.Exit(1)
	}
	fmt.Println(id)
}
