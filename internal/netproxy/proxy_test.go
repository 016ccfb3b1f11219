package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a map; a name with several answers gives
// them in turn (a rebinding server), the last one from then on.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(m map[string][][]string) *fakeResolver {
	return &fakeResolver{answers: m, calls: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	var out []netip.Addr
	for _, s := range seq[i] {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// upstream is a loopback server that records the requests it got.
type upstream struct {
	srv   *httptest.Server
	port  int
	mu    sync.Mutex
	hosts []string
	paths []string
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.hosts = append(u.hosts, r.Host)
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		fmt.Fprintf(w, "hello %s %s", r.URL.Path, body)
	}))
	t.Cleanup(u.srv.Close)
	u.port = u.srv.Listener.Addr().(*net.TCPAddr).Port
	return u
}

func (u *upstream) requests() ([]string, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.hosts...), append([]string(nil), u.paths...)
}

func startProxy(t *testing.T, patterns []string, res Resolver, tweak ...func(*Config)) *Proxy {
	t.Helper()
	allow, err := ParseAllowlist(patterns)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Allow: allow, Resolver: res}
	for _, f := range tweak {
		f(&cfg)
	}
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// raw sends text on a new connection to the proxy and returns the
// response to it.
func raw(t *testing.T, p *Proxy, text string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang fails, it does not time anything
	if _, err := io.WriteString(c, text); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response to %q: %v", text, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func client(p *Proxy) *http.Client {
	u, _ := url.Parse(p.URL())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
}

func TestAllowedLoopbackServerReachedThroughTheProxy(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, []string{"127.0.0.1:" + strconv.Itoa(up.port)}, newResolver(nil))
	resp, err := client(p).Get(up.srv.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello /plain " {
		t.Fatalf("plain HTTP: %d %q", resp.StatusCode, body)
	}

	// CONNECT, then HTTP inside the tunnel, with bytes sent before the
	// proxy's answer (they must reach the server too).
	addr := up.srv.Listener.Addr().String()
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	first, err := http.ReadResponse(br, nil)
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", first, err)
	}
	second, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(second.Body)
	if string(b) != "hello /tunnel " {
		t.Fatalf("through the tunnel: %q", b)
	}
	if r := p.TakeRefused(); r != nil {
		t.Fatalf("refused %v", r)
	}
}

func TestRefusedHostGets403WithReasonAndIsCounted(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, []string{"127.0.0.1:" + strconv.Itoa(up.port)}, newResolver(map[string][][]string{"example.org": {{"127.0.0.1"}}}))
	for range 3 {
		resp, body := raw(t, p, "GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n")
		if resp.StatusCode != 403 || !strings.Contains(body, "example.org: not in the allowlist") {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	}
	resp, body := raw(t, p, "CONNECT evil.example.net:443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "evil.example.net: not in the allowlist") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	got := p.TakeRefused()
	want := []Refusal{{"evil.example.net", 1}, {"example.org", 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("refused %v, want %v", got, want)
	}
	if again := p.TakeRefused(); again != nil {
		t.Fatalf("TakeRefused did not start afresh: %v", again)
	}
	if _, paths := up.requests(); len(paths) != 0 {
		t.Fatalf("the server got %v", paths)
	}
}

// TestAttacks are requests a sandboxed command could try to get past
// the allowlist with; each must be refused (403) or rejected (400).
func TestAttacks(t *testing.T) {
	up := newUpstream(t)
	port := strconv.Itoa(up.port)
	res := newResolver(map[string][][]string{
		"loop.example.com":    {{"127.0.0.1"}},
		"meta.example.com":    {{"169.254.169.254"}},
		"mapped.example.com":  {{"::ffff:127.0.0.1"}},
		"zero.example.com":    {{"0.0.0.0"}},
		"private.example.com": {{"10.1.2.3", "fd00::1"}},
		"v6loop.example.com":  {{"::1"}},
		"nat64.example.com":   {{"64:ff9b::7f00:1"}},
		"svc.example.com":     {{"127.0.0.1"}},
	})
	p := startProxy(t, []string{"*.example.com:" + port, "*.example.com", "svc.example.com:" + port}, res)
	cases := []struct {
		name, req, want string
		code            int
	}{
		{"IP literal not listed", "CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"mapped IPv6 literal", "CONNECT [::ffff:127.0.0.1]:" + port + " HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"unspecified address", "CONNECT 0.0.0.0:" + port + " HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"wildcard name resolving to loopback", "CONNECT loop.example.com:" + port + " HTTP/1.1\r\n\r\n", "only to private", 403},
		{"to the metadata service", "GET http://meta.example.com/latest HTTP/1.1\r\nHost: meta.example.com\r\n\r\n", "only to private", 403},
		{"to mapped loopback", "CONNECT mapped.example.com:" + port + " HTTP/1.1\r\n\r\n", "only to private", 403},
		{"to 0.0.0.0", "CONNECT zero.example.com:" + port + " HTTP/1.1\r\n\r\n", "only to private", 403},
		{"to private addresses", "CONNECT private.example.com:443 HTTP/1.1\r\n\r\n", "only to private", 403},
		{"to IPv6 loopback", "CONNECT v6loop.example.com:443 HTTP/1.1\r\n\r\n", "only to private", 403},
		{"to NAT64 loopback", "CONNECT nat64.example.com:443 HTTP/1.1\r\n\r\n", "only to private", 403},
		{"look-alike name", "CONNECT evil-example.com:443 HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"the wildcard's own domain", "CONNECT example.com:443 HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"suffix in the middle", "CONNECT svc.example.com.evil.org:443 HTTP/1.1\r\n\r\n", "not in the allowlist", 403},
		{"port 22 of an allowed name", "CONNECT svc.example.com:22 HTTP/1.1\r\n\r\n", "port 22 is not allowed", 403},
		{"no port", "CONNECT svc.example.com HTTP/1.1\r\n\r\n", "needs host:port", 403},
		{"userinfo in CONNECT", "CONNECT user@svc.example.com:" + port + " HTTP/1.1\r\n\r\n", "", 0},
		{"userinfo in the URL", "GET http://u:p@svc.example.com:" + port + "/ HTTP/1.1\r\nHost: svc.example.com\r\n\r\n", "user information", 403},
		{"non-ASCII name", "CONNECT b\xc3\xbccher.example.com:443 HTTP/1.1\r\n\r\n", "punycode", 403},
		{"numeric last label", "CONNECT 127.1:" + port + " HTTP/1.1\r\n\r\n", "not a valid host", 403},
		{"zone", "CONNECT [fe80::1%25lo]:443 HTTP/1.1\r\n\r\n", "", 0},
		{"origin form with an allowed Host", "GET /x HTTP/1.1\r\nHost: svc.example.com:" + port + "\r\n\r\n", "absolute-form", 400},
		{"HTTP/1.0 origin form without Host", "GET /x HTTP/1.0\r\n\r\n", "absolute-form", 400},
		{"two Content-Lengths", "POST http://svc.example.com:" + port + "/ HTTP/1.1\r\nHost: svc.example.com\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", "", 400},
		{"Transfer-Encoding other than chunked", "POST http://svc.example.com:" + port + "/ HTTP/1.1\r\nHost: svc.example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "", 0},
		{"https in absolute form", "GET https://svc.example.com:" + port + "/ HTTP/1.1\r\nHost: svc.example.com\r\n\r\n", "use CONNECT", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := raw(t, p, c.req)
			if c.code == 0 { // refused or rejected, either way (the server is checked below)
				if resp.StatusCode < 400 {
					t.Fatalf("%d %q", resp.StatusCode, body)
				}
				return
			}
			if resp.StatusCode != c.code || !strings.Contains(body, c.want) {
				t.Fatalf("%d %q, want %d with %q", resp.StatusCode, body, c.code, c.want)
			}
		})
	}
	if _, paths := up.requests(); len(paths) != 0 {
		t.Fatalf("the server got %v", paths)
	}
}

func TestExplicitNameMayBePrivateAndIsNormalised(t *testing.T) {
	up := newUpstream(t)
	port := strconv.Itoa(up.port)
	res := newResolver(map[string][][]string{"svc.example.com": {{"127.0.0.1"}}})
	p := startProxy(t, []string{"svc.example.com:" + port}, res)
	// Upper case and a trailing dot name the same host; the Host header
	// the server sees is the request URI's, not the one the client sent.
	resp, body := raw(t, p, "GET http://SVC.Example.COM.:"+port+"/a HTTP/1.1\r\nHost: evil.example.org\r\n\r\n")
	if resp.StatusCode != 200 || body != "hello /a " {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	// HTTP/1.0 without a Host header, in absolute form.
	resp, body = raw(t, p, "GET http://svc.example.com:"+port+"/b HTTP/1.0\r\n\r\n")
	if resp.StatusCode != 200 || body != "hello /b " {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	hosts, _ := up.requests()
	for _, h := range hosts {
		if !strings.EqualFold(strings.TrimSuffix(strings.Split(h, ":")[0], "."), "svc.example.com") {
			t.Fatalf("the server saw Host %q", h)
		}
	}
	if n := res.count("svc.example.com"); n != 2 {
		t.Fatalf("resolved %d times, want once a request", n)
	}
}

// TestDialsTheAddressItChecked: a name that answers a public address
// to the check and loopback afterwards (DNS rebinding) is dialled at the
// address checked, resolved once.
func TestDialsTheAddressItChecked(t *testing.T) {
	res := newResolver(map[string][][]string{"rebind.example.com": {{"198.51.100.7"}, {"127.0.0.1"}}})
	var mu sync.Mutex
	var dialled []string
	p := startProxy(t, []string{"*.example.com"}, res, func(c *Config) {
		c.Dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			return nil, errors.New("test: no route")
		}
	})
	resp, _ := raw(t, p, "CONNECT rebind.example.com:443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	res.mu.Lock()
	res.answers["other.example.com"] = [][]string{{"198.51.100.8"}, {"127.0.0.1"}}
	res.mu.Unlock()
	resp, _ = raw(t, p, "GET http://other.example.com/ HTTP/1.1\r\nHost: other.example.com\r\n\r\n")
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(dialled) != "[198.51.100.7:443 198.51.100.8:80]" {
		t.Fatalf("dialled %v", dialled)
	}
	if res.count("rebind.example.com") != 1 || res.count("other.example.com") != 1 {
		t.Fatal("resolved more than once")
	}
}

// TestNoSmuggling: a request with both chunked encoding and a
// Content-Length, whose body holds a second request, never reaches the
// server as two requests.
func TestNoSmuggling(t *testing.T) {
	up := newUpstream(t)
	port := strconv.Itoa(up.port)
	p := startProxy(t, []string{"127.0.0.1:" + port}, newResolver(nil))
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n\r\n"
	req := "POST http://127.0.0.1:" + port + "/front HTTP/1.1\r\nHost: 127.0.0.1:" + port +
		"\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, req)
	br := bufio.NewReader(c)
	// The chunked encoding wins (Content-Length is ignored): /front has
	// an empty body, and what follows it is a request of its own, on the
	// client's connection, which the proxy reads as one: in origin form,
	// so refused. The server sees /front alone.
	var codes []int
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		codes = append(codes, resp.StatusCode)
	}
	if fmt.Sprint(codes) != "[200 400]" {
		t.Fatalf("answers %v, want [200 400]", codes)
	}
	if _, paths := up.requests(); fmt.Sprint(paths) != "[/front]" {
		t.Fatalf("the server got %v", paths)
	}
}

// TestSlowClientIsCutOff: a client that never finishes its headers is
// disconnected (ReadHeaderTimeout), not left holding a connection.
func TestSlowClientIsCutOff(t *testing.T) {
	p := startProxy(t, []string{"example.com"}, newResolver(nil), func(c *Config) { c.ReadHeaderTimeout = 50 * time.Millisecond })
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET http://example.com/ HTTP/1.1\r\nX-A: 1\r\n")
	_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // the safety net, far beyond the timeout
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the proxy kept the slow client's connection open")
	}
}

// TestProxyItselfRefused: even listed exactly, the proxy's own address
// is no target (a request would loop through it).
func TestProxyItselfRefused(t *testing.T) {
	allow, err := ParseAllowlist(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	self := "127.0.0.1:" + strconv.Itoa(p.Port())
	if p.cfg.Allow, err = ParseAllowlist([]string{self}); err != nil {
		t.Fatal(err)
	}
	// check, in this goroutine: the server's never saw the new list.
	if _, rerr := p.check(context.Background(), self, 0); rerr == nil || !strings.Contains(rerr.Reason, "grub's proxy itself") {
		t.Fatalf("check(%s) = %v", self, rerr)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	up := newUpstream(t)
	addr := up.srv.Listener.Addr().String()
	p := startProxy(t, []string{addr}, newResolver(nil))
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", addr)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(br); err != nil {
		t.Fatalf("the tunnel was not closed: %v", err)
	}
}

func TestTooManyRefusedHostsAreGrouped(t *testing.T) {
	p := startProxy(t, nil, newResolver(nil))
	for i := range maxRefusedHosts + 5 {
		raw(t, p, fmt.Sprintf("CONNECT h%d.example.org:443 HTTP/1.1\r\n\r\n", i))
	}
	got := p.TakeRefused()
	if len(got) != maxRefusedHosts+1 || got[0].Host != otherHosts || got[0].Count != 5 {
		t.Fatalf("%d hosts, first %v", len(got), got[0])
	}
}

func TestEnv(t *testing.T) {
	env := Env([]string{"PATH=/bin", "https_proxy=http://elsewhere", "No_Proxy=*", "HOME=/h"}, "http://127.0.0.1:9")
	want := "[PATH=/bin HOME=/h HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 " +
		"http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy=]"
	if fmt.Sprint(env) != want {
		t.Fatalf("%v", env)
	}
}

// TestConnectionsAreCapped: with MaxConns 2, five clients at once are all
// served, in turn, never more than two inside the proxy (the server holds
// each request until the test lets it go, and counts how many it holds).
// TestLimitListenerSlots checks the cap itself.
func TestConnectionsAreCapped(t *testing.T) {
	arrived := make(chan int, 5)
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		n := inFlight
		mu.Unlock()
		arrived <- n
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	defer srv.Close()
	p := startProxy(t, []string{srv.Listener.Addr().String()}, newResolver(nil), func(c *Config) { c.MaxConns = 2 })
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			tr := &http.Transport{Proxy: http.ProxyURL(mustURL(p.URL())), DisableKeepAlives: true}
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	most := 0
	for range 5 {
		most = max(most, <-arrived)
		release <- struct{}{} // to whichever request waits
	}
	if most > 2 {
		t.Fatalf("%d requests inside the proxy at once, want at most 2", most)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestLimitListenerSlots: each accepted connection takes a slot until
// it is closed (once, however often Close is called); a full listener
// has none to give.
func TestLimitListenerSlots(t *testing.T) {
	inner, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, make(chan struct{}, 2))
	defer l.Close()
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp4", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, a)
	}
	if len(l.sem) != 2 {
		t.Fatalf("%d slots taken after two connections, want 2", len(l.sem))
	}
	conns[0].Close()
	conns[0].Close()
	if len(l.sem) != 1 {
		t.Fatalf("%d slots taken after one Close (twice), want 1", len(l.sem))
	}
	conns[1].Close()
	if len(l.sem) != 0 {
		t.Fatalf("%d slots taken after both closed", len(l.sem))
	}
}

// TestLimitListenerCloseEndsWait: a listener full of connections still
// closes, and its Accept returns.
func TestLimitListenerCloseEndsWait(t *testing.T) {
	inner, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, make(chan struct{}, 1))
	c, err := net.Dial("tcp4", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := l.Accept(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := l.Accept(); done <- err }()
	l.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}
