// Command agentstub runs the stub model server of internal/agentstub on its
// own, for trying the real agent CLIs by hand or capturing their output:
//
//	go run ./internal/agentstub/cmd/agentstub -api anthropic|responses [-addr 127.0.0.1:0] [-fault 500|overloaded] [-features 2]
//
// It prints the base URL to give the CLI on its first line and logs every
// request to standard error.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/grub-dev/grub/internal/agentstub"
)

func main() {
	api := flag.String("api", agentstub.Anthropic, "the API to serve: anthropic (Claude Code) or responses (Codex)")
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on")
	fault := flag.String("fault", "", "answer every model request with this failure: 500 or overloaded")
	features := flag.Int("features", 2, "features the scripted agent plans")
	model := flag.String("model", "", "the model named in responses (default: the request's)")
	flag.Parse()
	if *api != agentstub.Anthropic && *api != agentstub.Responses {
		fmt.Fprintln(os.Stderr, "agentstub: -api must be anthropic or responses")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentstub:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	srv := agentstub.New(agentstub.Config{API: *api, Model: *model, Fault: *fault,
		Brain: agentstub.Brain{Features: *features}, Log: os.Stderr})
	if err := http.Serve(ln, srv); err != nil {
		fmt.Fprintln(os.Stderr, "agentstub:", err)
		os.Exit(1)
	}
}
