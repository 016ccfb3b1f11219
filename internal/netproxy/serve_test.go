package netproxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// extraListener is a loopback listener that p serves through Serve, and
// the channel Serve's result arrives on.
func extraListener(t *testing.T, p *Proxy) (net.Listener, chan error) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	return l, served
}

func get(t *testing.T, proxyAddr, target string) (int, string) {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(mustURL("http://" + proxyAddr)), DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Get(target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServeChecksAndCounts: a listener given to Serve gets the same
// checks as the proxy's own, and its refusals are counted with theirs.
func TestServeChecksAndCounts(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, []string{"127.0.0.1:" + strconv.Itoa(up.port)}, newResolver(nil))
	l, _ := extraListener(t, p)
	if code, body := get(t, l.Addr().String(), up.srv.URL+"/extra"); code != 200 || body != "hello /extra " {
		t.Fatalf("allowed host through Serve's listener: %d %q", code, body)
	}
	if code, body := get(t, l.Addr().String(), "http://example.org/"); code != 403 || !strings.Contains(body, "not in the allowlist") {
		t.Fatalf("refused host through Serve's listener: %d %q", code, body)
	}
	if code, _ := get(t, p.ln.Addr().String(), "http://example.org/"); code != 403 {
		t.Fatalf("refused host through the proxy's own listener: %d", code)
	}
	if got := p.TakeRefused(); len(got) != 1 || got[0] != (Refusal{"example.org", 2}) {
		t.Fatalf("refused %v, want example.org ×2", got)
	}
}

// TestServeSharesTheCap: with MaxConns 2, five clients at once spread
// over the proxy's listener and Serve's are all served, never more than
// two inside the proxy.
func TestServeSharesTheCap(t *testing.T) {
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
	l, _ := extraListener(t, p)
	errs := make(chan error, 5)
	for i := range 5 {
		addr := p.ln.Addr().String()
		if i%2 == 1 {
			addr = l.Addr().String()
		}
		go func() {
			tr := &http.Transport{Proxy: http.ProxyURL(mustURL("http://" + addr)), DisableKeepAlives: true}
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
		release <- struct{}{}
	}
	if most > 2 {
		t.Fatalf("%d requests inside the proxy at once over two listeners, want at most 2", most)
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestServeEnds: closing Serve's listener ends Serve (nil) and leaves
// the proxy serving; closing the proxy ends Serve and closes its
// listener; Serve after Close returns at once, its listener closed.
func TestServeEnds(t *testing.T) {
	up := newUpstream(t)
	p := startProxy(t, []string{up.srv.Listener.Addr().String()}, newResolver(nil))
	l, served := extraListener(t, p)
	if code, _ := get(t, l.Addr().String(), up.srv.URL); code != 200 {
		t.Fatalf("through Serve's listener: %d", code)
	}
	_ = l.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve after its listener closed: %v", err)
	}
	if code, _ := get(t, p.ln.Addr().String(), up.srv.URL); code != 200 {
		t.Fatalf("the proxy's own listener after Serve's closed: %d", code)
	}

	l2, served2 := extraListener(t, p)
	if code, _ := get(t, l2.Addr().String(), up.srv.URL); code != 200 { // Serve is running
		t.Fatalf("through the second listener: %d", code)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served2; err != nil {
		t.Fatalf("Serve after Close: %v", err)
	}
	if c, err := net.Dial("tcp", l2.Addr().String()); err == nil {
		c.Close()
		t.Fatal("Close left Serve's listener open")
	}

	l3, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Serve(l3); err != nil {
		t.Fatalf("Serve on a closed proxy: %v", err)
	}
	if c, err := net.Dial("tcp", l3.Addr().String()); err == nil {
		c.Close()
		t.Fatal("Serve on a closed proxy left its listener open")
	}
}
