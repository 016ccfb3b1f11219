package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// FuzzRequest feeds the proxy's handler any request the HTTP server
// would parse, with a dialer that records what it is asked to reach: the
// only addresses ever dialled are those the allowlist lets through
// (192.0.2.1:8080 listed exactly, and a public address for the names
// below *.example.com at ports 80 and 443), whatever the request line,
// Host header, userinfo or encoding.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"GET http://a.example.com/ HTTP/1.1\r\nHost: a.example.com\r\n\r\n",
		"CONNECT a.example.com:443 HTTP/1.1\r\n\r\n",
		"CONNECT 192.0.2.1:8080 HTTP/1.1\r\n\r\n",
		"GET http://192.0.2.1:8080/x HTTP/1.0\r\n\r\n",
		"GET http://u@loop.example.com/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT [::ffff:192.0.2.1]:8080 HTTP/1.1\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: a.example.com\r\n\r\n",
		"POST http://a.example.com/ HTTP/1.1\r\nHost: a.example.com\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	} {
		f.Add(s)
	}
	allow, err := ParseAllowlist([]string{"*.example.com", "192.0.2.1:8080"})
	if err != nil {
		f.Fatal(err)
	}
	res := resolverFunc(func(host string) []string {
		if strings.HasPrefix(host, "loop.") {
			return []string{"127.0.0.1", "::1", "169.254.169.254"}
		}
		return []string{"198.51.100.1", "10.0.0.1"}
	})
	f.Fuzz(func(t *testing.T, text string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(text)))
		if err != nil {
			return
		}
		var dialled []string
		p := &Proxy{refused: map[string]int{}, tunnels: map[net.Conn]struct{}{}}
		p.cfg = Config{Allow: allow, Resolver: res, Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			return nil, errors.New("fuzz: no network")
		}}
		p.initForward()
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		for _, a := range dialled {
			switch a {
			case "192.0.2.1:8080", "198.51.100.1:80", "198.51.100.1:443":
			default:
				t.Fatalf("%q dialled %s", text, a)
			}
		}
		if w.Code == http.StatusForbidden && !bytes.Contains(w.Body.Bytes(), []byte("refused")) {
			t.Fatalf("403 without a reason: %q", w.Body.String())
		}
	})
}

type resolverFunc func(host string) []string

func (r resolverFunc) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range r(host) {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}
