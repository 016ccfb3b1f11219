package netproxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// benchClients are keep-alive clients of two loopback servers (plain
// HTTP and HTTPS, each answering "ok"), direct and through a proxy that
// allows them.
type benchClients struct {
	plainURL, tlsURL                   string
	direct, proxied, directTLS, tunnel *http.Client
}

func newBenchClients(b *testing.B) *benchClients {
	b.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	plain, tls := httptest.NewServer(h), httptest.NewTLSServer(h)
	b.Cleanup(plain.Close)
	b.Cleanup(tls.Close)
	port := func(s *httptest.Server) string { return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port) }
	allow, err := ParseAllowlist([]string{"127.0.0.1:" + port(plain), "127.0.0.1:" + port(tls)})
	if err != nil {
		b.Fatal(err)
	}
	p, err := Start(Config{Allow: allow})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	proxyURL, _ := url.Parse(p.URL())
	tunnel := tls.Client().Transport.(*http.Transport).Clone()
	tunnel.Proxy = http.ProxyURL(proxyURL)
	c := &benchClients{plainURL: plain.URL, tlsURL: tls.URL,
		direct:    &http.Client{Transport: &http.Transport{}},
		proxied:   &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}},
		directTLS: &http.Client{Transport: tls.Client().Transport.(*http.Transport).Clone()},
		tunnel:    &http.Client{Transport: tunnel},
	}
	b.Cleanup(func() {
		for _, cl := range []*http.Client{c.direct, c.proxied, c.directTLS, c.tunnel} {
			cl.CloseIdleConnections()
		}
	})
	return c
}

// hundred sends 100 GETs of target with c.
func hundred(b *testing.B, c *http.Client, target string) {
	for range 100 {
		resp, err := c.Get(target)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// BenchmarkRequests is 100 requests to a loopback server on keep-alive
// connections: plain HTTP sent directly and through the proxy (which
// parses and forwards each request), HTTPS sent directly and over a
// CONNECT tunnel of the proxy (which copies bytes).
func BenchmarkRequests(b *testing.B) {
	c := newBenchClients(b)
	for _, bb := range []struct {
		name   string
		client *http.Client
		target string
	}{
		{"direct", c.direct, c.plainURL},
		{"proxy", c.proxied, c.plainURL},
		{"direct-tls", c.directTLS, c.tlsURL},
		{"connect-tls", c.tunnel, c.tlsURL},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				hundred(b, bb.client, bb.target)
			}
		})
	}
}

// BenchmarkRatio sends the same 100 requests through the proxy and
// directly in turn, each iteration, and reports the ratios of the time
// they took (connect/direct for HTTPS, proxy/direct for plain HTTP): on
// a shared machine, taking turns keeps a change of load from landing on
// one side only. The goal: connect/direct at most 1.3.
func BenchmarkRatio(b *testing.B) {
	c := newBenchClients(b)
	var direct, proxied, directTLS, tunnel time.Duration
	timed := func(d *time.Duration, cl *http.Client, target string) {
		start := time.Now()
		hundred(b, cl, target)
		*d += time.Since(start)
	}
	for b.Loop() {
		timed(&directTLS, c.directTLS, c.tlsURL)
		timed(&tunnel, c.tunnel, c.tlsURL)
		timed(&direct, c.direct, c.plainURL)
		timed(&proxied, c.proxied, c.plainURL)
	}
	b.ReportMetric(float64(tunnel)/float64(directTLS), "connect/direct")
	b.ReportMetric(float64(proxied)/float64(direct), "proxy/direct")
}
