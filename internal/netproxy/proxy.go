package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resolver looks host names up; *net.Resolver is one. Tests give a map.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what a Proxy allows and how it reaches the outside.
type Config struct {
	// Allow is the allowlist; nil or empty allows nothing.
	Allow *Allowlist
	// Resolver looks allowed names up; nil: net.DefaultResolver.
	Resolver Resolver
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers (a slowloris client is cut off); 0: 10 s.
	ReadHeaderTimeout time.Duration
	// DialTimeout bounds a connection to an allowed host; 0: 30 s.
	DialTimeout time.Duration
	// Dial connects to a checked address (an IP address and port, never
	// a name); nil: a net.Dialer. Tests watch what is dialled with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConns caps the client connections served at once; 0: 256.
	MaxConns int
}

func (c Config) maxConns() int {
	if c.MaxConns > 0 {
		return c.MaxConns
	}
	return maxConns
}

// maxRefusedHosts caps the distinct hosts counted between two
// TakeRefused calls; the others are counted under otherHosts.
const maxRefusedHosts = 64

const otherHosts = "(other hosts)"

// Refusal is a host the proxy refused and how many times.
type Refusal struct {
	Host  string
	Count int
}

// Proxy is an HTTP proxy on 127.0.0.1 that lets through only the hosts
// of its allowlist: CONNECT tunnels (HTTPS and anything else over TCP)
// and plain HTTP requests in absolute form, which it forwards. Every
// connection goes to an address the proxy resolved and checked itself.
type Proxy struct {
	cfg   Config
	ln    net.Listener
	srv   *http.Server
	fwd   *httputil.ReverseProxy
	tr    *http.Transport
	serve chan struct{} // closed when serving ln ended
	// slots caps the client connections served at once, over ln and
	// every listener Serve was given.
	slots chan struct{}

	mu      sync.Mutex
	refused map[string]int
	tunnels map[net.Conn]struct{}
	closed  bool
}

// Start listens on a free port of 127.0.0.1 and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = 10 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: cfg.DialTimeout}
		cfg.Dial = d.DialContext
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("network proxy: %w", err)
	}
	p := &Proxy{cfg: cfg, ln: ln, serve: make(chan struct{}), slots: make(chan struct{}, cfg.maxConns()),
		refused: map[string]int{}, tunnels: map[net.Conn]struct{}{}}
	p.initForward()
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0), // a client's bad request is its own business
	}
	go func() {
		defer close(p.serve)
		_ = p.srv.Serve(newLimitListener(ln, p.slots)) // ends with ErrServerClosed at Close
	}()
	return p, nil
}

// Serve serves the proxy on l too, until l is closed or the proxy is
// (Close closes l, as it does the proxy's own listener), and returns
// nil then, or the error that stopped it; l is closed when it returns.
// Requests on l get the same checks and counts as on the proxy's own
// listener, and its connections share the proxy's cap. grub gives it
// the listener a sandbox launcher made in its network namespace, for
// the length of one command.
func (p *Proxy) Serve(l net.Listener) error {
	err := p.srv.Serve(newLimitListener(l, p.slots))
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// initForward makes the transport and the forwarder of plain HTTP
// requests, which dial through dialChecked only.
func (p *Proxy) initForward() {
	p.tr = &http.Transport{
		Proxy:               nil, // never grub's own proxy settings
		DialContext:         p.dialChecked,
		DisableCompression:  true, // pass Accept-Encoding and bodies through as they are
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite:    func(r *httputil.ProxyRequest) { r.Out.Host = "" }, // the Host header is the URL's host, the one checked
		Transport:  p.tr,
		BufferPool: bufferPool{},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "grub's network proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// bufferPool lends the forwarder its copy buffers, rather than one new
// 32 KiB buffer a response.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { return make([]byte, 32<<10) }}

func (bufferPool) Get() []byte  { return buffers.Get().([]byte) }
func (bufferPool) Put(b []byte) { buffers.Put(b) }

// Port is the port the proxy listens on, on 127.0.0.1 (0 before it
// listens).
func (p *Proxy) Port() int {
	if p.ln == nil {
		return 0
	}
	return p.ln.Addr().(*net.TCPAddr).Port
}

// URL is the proxy's address as the *_PROXY variables give it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy: the listeners (its own and Serve's), every
// connection and tunnel.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	<-p.serve
	p.tr.CloseIdleConnections()
	return err
}

// TakeRefused returns the hosts refused since the last call, sorted by
// host, and starts counting afresh.
func (p *Proxy) TakeRefused() []Refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.refused) == 0 {
		return nil
	}
	out := make([]Refusal, 0, len(p.refused))
	for h, n := range p.refused {
		out = append(out, Refusal{Host: h, Count: n})
	}
	clear(p.refused)
	slices.SortFunc(out, func(a, b Refusal) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// RefusedError is why the proxy refused a request.
type RefusedError struct {
	Host   string // as recorded: the host, with its port unless 80 or 443
	Reason string
}

func (e *RefusedError) Error() string { return e.Host + ": " + e.Reason }

// refuse records a refusal and answers it: 403 with the reason.
func (p *Proxy) refuse(w http.ResponseWriter, e *RefusedError) {
	p.mu.Lock()
	key := e.Host
	if _, ok := p.refused[key]; !ok && len(p.refused) >= maxRefusedHosts {
		key = otherHosts
	}
	p.refused[key]++
	p.mu.Unlock()
	w.Header().Set("X-Grub-Proxy", "refused")
	http.Error(w, "grub's network allowlist refused "+e.Error()+"\n(the task's --allow-domain list)", http.StatusForbidden)
}

// ServeHTTP handles one request: CONNECT, or a plain HTTP request in
// absolute form.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "grub's network proxy takes CONNECT and absolute-form requests (GET http://host/path), not "+strconv.Quote(r.URL.Path), http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "grub's network proxy forwards http:// URLs; use CONNECT for "+r.URL.Scheme, http.StatusBadRequest)
		return
	}
	if r.URL.User != nil {
		p.refuse(w, &RefusedError{Host: displayAuthority(r.URL.Host), Reason: "user information in the URL"})
		return
	}
	t, rerr := p.check(r.Context(), r.URL.Host, 80)
	if rerr != nil {
		p.refuse(w, rerr)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), targetKey{}, t))
	p.fwd.ServeHTTP(w, r)
}

// connect opens a tunnel to an allowed host:port.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	authority := r.RequestURI
	if strings.ContainsAny(authority, "@/?#") || r.URL.User != nil {
		p.refuse(w, &RefusedError{Host: displayAuthority(r.URL.Host), Reason: "CONNECT takes host:port only"})
		return
	}
	t, rerr := p.check(r.Context(), authority, 0)
	if rerr != nil {
		p.refuse(w, rerr)
		return
	}
	up, err := p.dialAddrs(r.Context(), t)
	if err != nil {
		http.Error(w, "grub's network proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "grub's network proxy: cannot take the connection over", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	_ = client.SetDeadline(time.Time{})
	if !p.track(client, up) {
		return
	}
	defer p.untrack(client, up)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if n := buf.Reader.Buffered(); n > 0 { // what the client sent after the CONNECT's headers
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(client, up)
}

// splice copies both ways until one side ends, then closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // splice(2) between two TCP connections
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// track records a tunnel's connections for Close; false when the proxy
// is closed already (both are closed then).
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// target is a checked destination: the addresses the proxy may connect
// to for it, in order, and the port.
type target struct {
	host  Host
	port  int
	addrs []netip.Addr
}

type targetKey struct{}

// check decides whether authority (host:port; defPort when it has no
// port, 0: a port is required) may be reached, and resolves it: an
// address, or a name resolved by the proxy's resolver, keeping the
// public addresses unless the host is listed explicitly.
func (p *Proxy) check(ctx context.Context, authority string, defPort int) (*target, *RefusedError) {
	hostPart, port, err := splitAuthority(authority, defPort)
	if err != nil {
		return nil, &RefusedError{Host: displayAuthority(authority), Reason: err.Error()}
	}
	h, err := ParseHost(hostPart)
	if err != nil {
		return nil, &RefusedError{Host: displayAuthority(authority), Reason: "not a valid host: " + err.Error()}
	}
	shown := display(h, port)
	allowed, explicit := p.cfg.Allow.Match(h, port)
	if !allowed {
		if ok, _ := p.cfg.Allow.Match(h, 443); ok || p.cfg.Allow.matchesAnyPort(h) {
			return nil, &RefusedError{Host: shown, Reason: "port " + strconv.Itoa(port) + " is not allowed for this host (list host:" + strconv.Itoa(port) + ")"}
		}
		return nil, &RefusedError{Host: shown, Reason: "not in the allowlist"}
	}
	addrs := []netip.Addr{h.Addr}
	if !h.Addr.IsValid() {
		addrs, err = p.cfg.Resolver.LookupNetIP(ctx, "ip", h.Name)
		if err != nil {
			return nil, &RefusedError{Host: shown, Reason: "cannot resolve it: " + err.Error()}
		}
	}
	t := &target{host: h, port: port}
	for _, a := range addrs {
		if a = a.Unmap(); a.IsLoopback() && port == p.Port() {
			return nil, &RefusedError{Host: shown, Reason: "that is grub's proxy itself"}
		}
		if explicit || Public(a) {
			t.addrs = append(t.addrs, a)
		}
	}
	if len(t.addrs) == 0 {
		return nil, &RefusedError{Host: shown, Reason: "it resolves only to private, loopback or link-local addresses (list it by its exact name or address to allow them)"}
	}
	return t, nil
}

// splitAuthority splits host:port; a missing port is defPort, or an
// error when defPort is 0.
func splitAuthority(s string, defPort int) (string, int, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		if defPort == 0 || strings.Count(s, ":") == 1 || strings.HasSuffix(s, "]:") {
			return "", 0, errors.New("needs host:port")
		}
		return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), defPort, nil
	}
	port, err := parsePort(portText)
	if err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// display is a host as the ledger records it: with its port unless 80 or
// 443.
func display(h Host, port int) string {
	s := h.String()
	if h.Addr.Is6() {
		s = "[" + s + "]"
	}
	if port == 80 || port == 443 {
		return s
	}
	return s + ":" + strconv.Itoa(port)
}

// displayAuthority is a target that did not parse, as the ledger records
// it: printable ASCII only, at most 100 bytes.
func displayAuthority(s string) string {
	b := make([]byte, 0, min(len(s), 100))
	for i := 0; i < len(s) && len(b) < 100; i++ {
		if c := s[i]; c > ' ' && c < 0x7f {
			b = append(b, c)
		} else {
			b = append(b, '?')
		}
	}
	if len(b) == 0 {
		return "(no host)"
	}
	return string(b)
}

// dialChecked is the forwarding transport's dialer: it connects only to
// the addresses checked for the request (see ServeHTTP), never to what
// the transport names.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	t, ok := ctx.Value(targetKey{}).(*target)
	if !ok {
		return nil, errors.New("no checked target for " + addr)
	}
	return p.dialAddrs(ctx, t)
}

// dialAddrs connects to the first of t's addresses that answers.
func (p *Proxy) dialAddrs(ctx context.Context, t *target) (net.Conn, error) {
	var first error
	for _, a := range t.addrs {
		c, err := p.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(t.port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}
