package cli

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/grub-dev/grub/internal/netproxy"
	"github.com/grub-dev/grub/internal/proc"
	"github.com/grub-dev/grub/internal/sandbox"
)

// withNetNamespace is the setup for a run whose network rules
// (--no-network, --allow-domain) each command keeps in a network
// namespace of its own (Policy.NetNamespace), where probe
// (sandbox.NetNamespaces) says one can be made. Where it cannot, it is s
// unchanged, and one warning on w says what Landlock alone leaves open.
func (s sandboxSetup) withNetNamespace(w io.Writer, probe func() (bool, string)) sandboxSetup {
	p := s.Policy
	if !p.NoNetwork && p.ProxyPort == 0 {
		return s
	}
	ok, why := probe()
	if ok {
		s.Policy.NetNamespace = true
		return s
	}
	fmt.Fprintln(w, "grub: warning: "+netnsGap(p, why))
	return s
}

// netnsGap says what a policy's network rules leave open without a
// network namespace, Landlock's rules being all there is.
func netnsGap(p sandbox.Policy, why string) string {
	if p.ProxyPort != 0 {
		return why + ": --allow-domain rests on Landlock's port rule alone here: sandboxed commands can connect to any host on port " +
			strconv.Itoa(p.ProxyPort) + " (the proxy's), and UDP (below Landlock ABI 10), Multipath TCP and SCTP are not restricted"
	}
	return why + ": --no-network rests on Landlock alone here, which refuses TCP only: UDP (below Landlock ABI 10), Multipath TCP and SCTP still reach the host's loopback listeners and the outside"
}

// launch is the launch of argv under p. A launcher that makes a network
// namespace of its own for a proxy port (--allow-domain) gets a relay
// (sandbox.NewRelay) as its file descriptor sandbox.RelayFD: it listens
// on 127.0.0.1 at the proxy's port in its namespace and sends that
// socket back, and the run's proxy serves it (serveRelay) until the
// launched process has ended. Without a relay (no proxy, or no socket
// to make one with) the launcher refuses to run the command, and says
// why: it would have no way out.
func (s sandboxSetup) launch(self string, p sandbox.Policy, argv []string) proc.Launch {
	l := launch(self, p, argv)
	if !p.NetNamespace || p.ProxyPort == 0 || s.Proxy == nil {
		return l
	}
	ours, theirs, err := sandbox.NewRelay()
	if err != nil {
		return l
	}
	l.Files = []*os.File{theirs}
	l.Done = serveRelay(s.Proxy, ours)
	return l
}

// serveRelay waits, in a goroutine, for the listener the launcher sends
// over ours and serves px on it; it returns the function that ends
// that, for proc.Launch.Done: it closes ours and the listener (a
// command's daemon that outlives it then finds nothing listening), and
// waits for the goroutine, so that a run of many commands keeps no
// descriptor of those that ended. A launcher that sends nothing (it
// could not make its namespace, and its command uses the proxy on the
// host's loopback) costs only the wait.
func serveRelay(px *netproxy.Proxy, ours *os.File) func() {
	var (
		mu    sync.Mutex
		ln    net.Listener
		ended bool
	)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		f, err := sandbox.ReceiveListener(ours)
		if err != nil {
			return
		}
		l, err := net.FileListener(f)
		_ = f.Close()
		if err != nil {
			return
		}
		mu.Lock()
		if ended {
			mu.Unlock()
			_ = l.Close()
			return
		}
		ln = l
		mu.Unlock()
		_ = px.Serve(l) // until the launch ends or the proxy closes
	}()
	return func() {
		mu.Lock()
		ended = true
		if ln != nil {
			_ = ln.Close()
		}
		mu.Unlock()
		_ = ours.Close()
		<-finished
	}
}
