package netproxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
)

// BenchmarkRequests is 100 plain HTTP requests to a loopback server,
// sent directly, through the proxy, and over a CONNECT tunnel of the
// proxy (how HTTPS goes), each on keep-alive connections. The goal:
// proxy and connect at most 1.3 times direct.
func BenchmarkRequests(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	allow, err := ParseAllowlist([]string{"127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		b.Fatal(err)
	}
	p, err := Start(Config{Allow: allow})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	proxyURL, _ := url.Parse(p.URL())

	run := func(b *testing.B, tr *http.Transport, target string) {
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		for b.Loop() {
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
	}
	b.Run("direct", func(b *testing.B) { run(b, &http.Transport{}, srv.URL) })
	b.Run("proxy", func(b *testing.B) { run(b, &http.Transport{Proxy: http.ProxyURL(proxyURL)}, srv.URL) })
	tls := httptest.NewTLSServer(srv.Config.Handler)
	defer tls.Close()
	b.Run("direct-tls", func(b *testing.B) {
		tr := tls.Client().Transport.(*http.Transport).Clone()
		run(b, tr, tls.URL)
	})
	tport := tls.Listener.Addr().(*net.TCPAddr).Port
	allowTLS, _ := ParseAllowlist([]string{"127.0.0.1:" + strconv.Itoa(tport)})
	pt, err := Start(Config{Allow: allowTLS})
	if err != nil {
		b.Fatal(err)
	}
	defer pt.Close()
	ptURL, _ := url.Parse(pt.URL())
	b.Run("connect-tls", func(b *testing.B) {
		tr := tls.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyURL(ptURL)
		run(b, tr, tls.URL)
	})
}
