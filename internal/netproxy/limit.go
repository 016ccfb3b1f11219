package netproxy

import (
	"net"
	"sync"
)

// maxConns caps the proxy's client connections at once: each costs grub
// file descriptors (two for a tunnel), and a command that opened them
// without end could leave grub none to write its state with. Beyond it,
// connections wait in the kernel's backlog until one ends.
const maxConns = 256

// limitListener accepts connections while it can take one of the slots
// of sem, which listeners may share, and gives the slot back when the
// connection closes.
type limitListener struct {
	net.Listener
	sem    chan struct{}
	done   chan struct{} // closed by Close
	closed sync.Once
}

func newLimitListener(l net.Listener, sem chan struct{}) *limitListener {
	return &limitListener{Listener: l, sem: sem, done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection; once the
// listener is closed it fails at once, slot or not.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener and ends a wait for a slot.
func (l *limitListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection (the tunnel's copy ends with
// it).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
