package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPServer starts a loopback HTTP server for the rest of the script
// and sets $SERVER to its host:port and $SERVER_PORT to its port. It
// answers "hello PATH".
//
//	httpserver
func cmdHTTPServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: httpserver")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", r.URL.Path)
	}), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	ts.Defer(func() { _ = srv.Close() })
	ts.Setenv("SERVER", l.Addr().String())
	ts.Setenv("SERVER_PORT", fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
}

// fetchMain is the grub-fetch program: it GETs a URL through the proxy
// $HTTP_PROXY names (even for a loopback host, which Go's own
// environment rule would not send through a proxy), or directly with
// -direct, and prints one line: the status and the body's first line, or
// the error.
//
//	grub-fetch [-direct] URL
func fetchMain() {
	args := os.Args[1:]
	direct := len(args) == 2 && args[0] == "-direct"
	if direct {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: grub-fetch [-direct] URL")
		os.Exit(2)
	}
	tr := &http.Transport{}
	how := "direct"
	if !direct {
		how = "proxy"
		p, err := url.Parse(os.Getenv("HTTP_PROXY"))
		if err != nil || os.Getenv("HTTP_PROXY") == "" {
			fmt.Printf("%s %s: no HTTP_PROXY\n", how, args[0])
			return
		}
		tr.Proxy = http.ProxyURL(p)
	}
	c := &http.Client{Transport: tr, Timeout: time.Minute}
	resp, err := c.Get(args[0])
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "permission denied") {
			msg = "permission denied"
		}
		fmt.Printf("%s %s: %s\n", how, args[0], msg)
		return
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
	fmt.Printf("%s %s: %d %s\n", how, args[0], resp.StatusCode, strings.TrimSpace(line))
}
