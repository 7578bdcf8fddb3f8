package testkit

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// TCPProxy forwards TCP connections from 127.0.0.1 to a target, byte for
// byte, and cuts the network between them on demand without touching the
// target: Cut closes every open connection (a client reading a stream sees
// it end), Block refuses the connections that come until Unblock (each is
// accepted and closed at once: the client's handshake fails, as when a
// host is unreachable, without waiting for a timeout). Put it in front of
// an Engine's TLS port (its certificates are for 127.0.0.1) to take the
// engine out of reach while it and its containers run on.
type TCPProxy struct {
	// Addr is the proxy's host:port on 127.0.0.1.
	Addr   string
	target string
	ln     net.Listener

	mu      sync.Mutex
	blocked bool
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// NewTCPProxy starts a proxy to target (host:port), stopped with every
// connection when t ends.
func NewTCPProxy(t testing.TB, target string) *TCPProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: tcp proxy: %v", err)
	}
	p := &TCPProxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Cut closes every connection open through the proxy; new ones are
// forwarded (unless blocked).
func (p *TCPProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Block refuses new connections until Unblock; the open ones go on.
func (p *TCPProxy) Block() {
	p.mu.Lock()
	p.blocked = true
	p.mu.Unlock()
}

// Unblock forwards new connections again.
func (p *TCPProxy) Unblock() {
	p.mu.Lock()
	p.blocked = false
	p.mu.Unlock()
}

// accept serves the listener until it is closed.
func (p *TCPProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.blocked || p.closed {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(c)
	}
}

// forward copies both ways between c and a new connection to the target,
// until either side ends or the proxy cuts them.
func (p *TCPProxy) forward(c net.Conn) {
	defer p.wg.Done()
	defer p.drop(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		up.Close()
		c.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.drop(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err == nil || errors.Is(err, net.ErrClosed) {
			// Half-close: the other way may still carry data.
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
		}
		done <- struct{}{}
	}
	go pipe(up, c) // ends when c ends or is cut; waited for below
	go pipe(c, up)
	<-done
	// One way ended: a cut, or a side that closed. Wait for the other
	// unless the connection is being cut.
	<-done
}

// drop closes a connection and forgets it.
func (p *TCPProxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// close stops the proxy: the listener and every connection.
func (p *TCPProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}
