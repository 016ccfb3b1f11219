package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/grub-dev/grub/internal/sandbox"
)

// TestMain lets the test binary stand in for grub where a test runs
// commands through the sandbox: started as `grub __sandbox-exec` it is
// the launcher, and "__fetch URL" is a command that fetches URL through
// the proxy $HTTP_PROXY names.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case sandbox.ExecCommand:
			os.Exit(sandbox.Main(os.Args[2:]))
		case "__fetch":
			os.Exit(fetchThroughProxy(os.Args[2]))
		}
	}
	os.Exit(m.Run())
}

// fetchThroughProxy prints the status and body of a GET of target sent
// to $HTTP_PROXY (set explicitly: Go's own proxy settings leave
// loopback addresses out), or the error.
func fetchThroughProxy(target string) int {
	proxy, err := url.Parse(os.Getenv("HTTP_PROXY"))
	if err != nil || proxy.Host == "" {
		fmt.Println("no HTTP_PROXY")
		return 1
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := c.Get(target)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s\n", resp.StatusCode, body)
	return 0
}
