// Package netproxy is grub's network allowlist (--allow-domain): an HTTP
// proxy on 127.0.0.1 that grub runs, outside the sandbox, for the length
// of a run.
//
// It takes CONNECT (HTTPS, and any other TCP protocol a client tunnels)
// and plain HTTP requests in absolute form (GET http://host/path), which
// it forwards with net/http/httputil. A request goes through only when
// its host and port match the allowlist ([ParseAllowlist]: exact names,
// *.example.com wildcards, IP addresses, presets such as @go; ports 80
// and 443 unless a pattern names one). The proxy resolves allowed names
// itself (through the [Resolver] it is given, so that tests need no DNS)
// and connects only to an address it checked: never a private, loopback
// or link-local one ([Public]) unless that name or address is listed
// exactly. Anything else gets 403 with the reason in the body, and is
// counted ([Proxy.TakeRefused]) for the turn's ledger line.
//
// A client that is slow to send its headers is cut off
// ([Config.ReadHeaderTimeout]), and at most [Config.MaxConns] client
// connections are served at once (the others wait in the kernel's
// backlog), so that a command cannot use up grub's file descriptors.
//
// The sandbox makes it the only way out: each sandboxed command runs in
// a network namespace of its own, whose launcher listens on 127.0.0.1 at
// the proxy's port there and hands grub that socket, which
// [Proxy.Serve] serves like the proxy's own listener, and the
// launcher's Landlock rule lets sandboxed commands connect over TCP to
// the proxy's port only (all there is where namespaces are not
// available). [Env] points them at it.
//
// netproxy imports only the standard library.
package netproxy
