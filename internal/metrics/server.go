package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// readHeaderTimeout bounds a scraper's request headers; scrapeTimeout a
// whole response.
const (
	readHeaderTimeout = 5 * time.Second
	scrapeTimeout     = 30 * time.Second
)

// Server serves the metrics over HTTP at Path. New builds it, Open
// listens and starts its goroutine, Close stops it and waits.
type Server struct {
	addr string
	srv  *http.Server
	log  *slog.Logger

	mu   sync.Mutex
	ln   net.Listener
	done chan struct{}
}

// NewServer builds a Server for m on addr (host:port). It listens on
// nothing until Open.
func NewServer(m *Metrics, addr string, log *slog.Logger) *Server {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg, // counts promhttp's own errors
		Timeout:           scrapeTimeout,
		EnableOpenMetrics: false,
	}))
	return &Server{
		addr: addr,
		log:  log,
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, WriteTimeout: scrapeTimeout + 5*time.Second},
	}
}

// Open listens on the server's address and serves until Close.
func (s *Server) Open(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("metrics: listen on %s: %w", s.addr, err)
	}
	s.mu.Lock()
	s.ln, s.done = ln, make(chan struct{})
	done := s.done
	s.mu.Unlock()
	go func() { // ends when Close shuts the server down; Close waits for it
		defer close(done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics: serve", "err", err)
		}
	}()
	s.log.Info("metrics served", "url", "http://"+ln.Addr().String()+Path)
	return nil
}

// Addr is the address the server listens on (with the port chosen when
// the configured one was 0); empty before Open.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops serving, lets scrapes in flight finish within ctx, and
// waits for the server's goroutine. Closing a server never opened is a
// no-op.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("metrics: close: %w", context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("metrics: close: %w", err)
	}
	return nil
}
