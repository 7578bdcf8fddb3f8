package egress

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Timeouts of the proxy's own dials and reads.
const (
	dialTimeout   = 10 * time.Second
	headerTimeout = 30 * time.Second
	// idleTimeout ends a spliced CONNECT tunnel with no traffic either way.
	idleTimeout = 10 * time.Minute
)

// Server is the proxy. The zero value is not usable; use NewServer.
type Server struct {
	log      *slog.Logger
	gateways []netip.Addr
	resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	now      func() time.Time
	// upstream carries API requests (keep-alive: every model call of a
	// run goes to the same few hosts).
	upstream *http.Transport
	events   *eventLog

	mu  sync.RWMutex
	cfg *compiled // nil until Configure
}

// compiled is a Config ready for requests.
type compiled struct {
	key        []byte
	apis       map[string]*route
	cliHosts   map[string][]string
	workspaces map[string][]string
	hash       string
}

// route is one API route.
type route struct {
	upstream *url.URL
	header   *strings.Replacer // placeholders → real values, in header values
	query    *strings.Replacer // the same, query-escaped
	proxy    *httputil.ReverseProxy
}

// Options configure a Server; zero fields take defaults (the system
// resolver, a plain dialer, the container's own gateways).
type Options struct {
	Logger   *slog.Logger
	Gateways []netip.Addr
	Resolve  func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	Now      func() time.Time
}

// NewServer returns an unconfigured proxy: until Configure, it refuses
// everything.
func NewServer(o Options) *Server {
	s := &Server{log: o.Logger, gateways: o.Gateways, resolve: o.Resolve, dial: o.Dial, now: o.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.gateways == nil {
		s.gateways = localGateways()
	}
	if s.resolve == nil {
		s.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if s.dial == nil {
		d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
		s.dial = d.DialContext
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.upstream = &http.Transport{
		DialContext:           s.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: 10 * time.Minute, // a model may think long before its first byte
	}
	s.events = newEventLog(s.now)
	return s
}

// Configure replaces the configuration.
func (s *Server) Configure(c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	raw, _ := json.Marshal(c)
	sum := sha256.Sum256(raw)
	cc := &compiled{
		key:        c.Key,
		apis:       make(map[string]*route, len(c.APIs)),
		cliHosts:   canonicalLists(c.CLIHosts),
		workspaces: canonicalLists(c.Workspaces),
		hash:       hex.EncodeToString(sum[:8]),
	}
	for _, a := range c.APIs {
		u, _ := upstreamURL(a.Upstream) // checked by Validate
		var hv, qv []string
		for p, v := range a.Secrets {
			hv = append(hv, p, v)
			qv = append(qv, p, url.QueryEscape(v))
		}
		r := &route{upstream: u, header: strings.NewReplacer(hv...), query: strings.NewReplacer(qv...)}
		r.proxy = &httputil.ReverseProxy{
			Rewrite:       r.rewrite,
			Transport:     s.upstream,
			FlushInterval: -1, // model APIs stream (server-sent events)
			ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
				s.log.Warn("egress: upstream failed", "api", a.Name, "err", err)
				http.Error(w, "fetch egress: the model API did not answer: "+err.Error(), http.StatusBadGateway)
			},
		}
		cc.apis[a.Name] = r
	}
	s.mu.Lock()
	s.cfg = cc
	s.mu.Unlock()
	return nil
}

// Hash identifies the configuration in effect ("" before Configure).
func (s *Server) Hash() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cfg == nil {
		return ""
	}
	return s.cfg.hash
}

func canonicalLists(in map[string][]string) map[string][]string {
	out := make(map[string][]string, len(in))
	for k, hosts := range in {
		for _, h := range hosts {
			c, _ := CheckHost(h) // checked by Validate
			out[k] = append(out[k], c)
		}
	}
	return out
}

func upstreamURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("upstream %q: want an http(s) URL with a host and an optional path", raw)
	}
	return u, nil
}

func (s *Server) config() *compiled {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cfg
}

// ServeHTTP serves the proxy port: CONNECT, absolute-form requests (the
// forward proxy) and origin-form requests (the API routes).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cfg := s.config()
	if cfg == nil {
		http.Error(w, "fetch egress: not configured yet (the kennel's way out is down)", http.StatusServiceUnavailable)
		return
	}
	switch {
	case r.Method == http.MethodConnect:
		s.connect(w, r, cfg)
	case r.URL.IsAbs() && !isSelf(r.URL.Host):
		s.forward(w, r, cfg)
	default:
		s.api(w, r, cfg)
	}
}

// isSelf reports whether host:port names the proxy itself.
func isSelf(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = hostport
	}
	return strings.EqualFold(h, Alias)
}

// runOf reads the run token of a forward-proxy request.
func (s *Server) runOf(r *http.Request, cfg *compiled) (Run, bool) {
	auth := r.Header.Get("Proxy-Authorization")
	b64, ok := strings.CutPrefix(auth, "Basic ")
	if !ok {
		return Run{}, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return Run{}, false
	}
	_, tok, _ := strings.Cut(string(raw), ":")
	return ParseToken(cfg.key, tok)
}

// refuse records a refusal and answers it.
func (s *Server) refuse(w http.ResponseWriter, run Run, host, port, reason, detail string, status int) {
	s.events.refuse(Refusal{Time: s.now().UTC(), Task: run.Task, CLI: run.CLI, Workspace: run.Workspace, Host: host, Port: port, Reason: reason, Detail: detail})
	s.log.Info("egress: refused", "task", run.Task, "host", host, "port", port, "reason", reason, "detail", detail)
	msg := fmt.Sprintf("fetch egress: %s refused (%s", net.JoinHostPort(host, port), reason)
	if detail != "" {
		msg += ": " + detail
	}
	msg += "). The owner can allow a host for this workspace with /hosts add HOST."
	if reason == ReasonToken {
		w.Header().Set("Proxy-Authenticate", `Basic realm="fetch-egress"`)
	}
	http.Error(w, msg, status)
}

// dialFor connects run to host:port if its rules allow it, or says why not.
func (s *Server) dialFor(ctx context.Context, cfg *compiled, run Run, host, port string) (net.Conn, string, string) {
	host = canonicalHost(host)
	if _, err := strconv.ParseUint(port, 10, 16); err != nil || port == "0" {
		return nil, ReasonNotAllowed, "bad port"
	}
	ownerNamed := matchHost(cfg.workspaces[run.Workspace], host)
	if !ownerNamed && !matchHost(cfg.cliHosts[run.CLI], host) {
		return nil, ReasonNotAllowed, ""
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, dialTimeout)
		addrs, err = s.resolve(rctx, host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return nil, ReasonResolve, ""
		}
	}
	for _, a := range addrs {
		if why := s.checkAddr(a, ownerNamed); why != "" {
			return nil, ReasonAddress, why
		}
	}
	var last error
	for _, a := range addrs {
		c, err := s.dial(ctx, "tcp", net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, "", ""
		}
		last = err
	}
	return nil, "unreachable", last.Error()
}

// connect serves CONNECT: a tunnel to an allowed host.
func (s *Server) connect(w http.ResponseWriter, r *http.Request, cfg *compiled) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "443"
	}
	run, ok := s.runOf(r, cfg)
	if !ok {
		s.refuse(w, Run{}, host, port, ReasonToken, "", http.StatusProxyAuthRequired)
		return
	}
	up, reason, detail := s.dialFor(r.Context(), cfg, run, host, port)
	if up == nil {
		status := http.StatusForbidden
		if reason == "unreachable" || reason == ReasonResolve {
			status = http.StatusBadGateway
		}
		s.refuse(w, run, host, port, reason, detail, status)
		return
	}
	s.events.pass(run.Task)
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "fetch egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		client.Close()
		up.Close()
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		pending, _ := buf.Reader.Peek(n)
		if _, err := up.Write(pending); err != nil {
			client.Close()
			up.Close()
			return
		}
	}
	splice(client, up)
}

// splice copies both ways until either side ends or both are idle for
// idleTimeout, then closes both.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(idleTimeout))
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

// forward serves an absolute-form request (plain HTTP through the proxy).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, cfg *compiled) {
	host, port := r.URL.Hostname(), r.URL.Port()
	if port == "" {
		port = "80"
	}
	run, ok := s.runOf(r, cfg)
	if !ok {
		s.refuse(w, Run{}, host, port, ReasonToken, "", http.StatusProxyAuthRequired)
		return
	}
	if r.URL.Scheme != "http" {
		s.refuse(w, run, host, port, ReasonNotAllowed, "scheme "+r.URL.Scheme, http.StatusBadRequest)
		return
	}
	conn, reason, detail := s.dialFor(r.Context(), cfg, run, host, port)
	if conn == nil {
		s.refuse(w, run, host, port, reason, detail, http.StatusForbidden)
		return
	}
	defer conn.Close() // whatever the transport did with it
	s.events.pass(run.Task)
	// One request on the connection just checked: no pool shared between
	// runs whose rules differ.
	tr := &http.Transport{
		DialContext:       func(context.Context, string, string) (net.Conn, error) { return conn, nil },
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "fetch egress: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// splitAPIPath splits /t/TOKEN/NAME/REST.
func splitAPIPath(p string) (token, name, rest string, ok bool) {
	p, ok = strings.CutPrefix(p, "/t/")
	if !ok {
		return "", "", "", false
	}
	token, p, ok = strings.Cut(p, "/")
	if !ok {
		return "", "", "", false
	}
	name, rest, _ = strings.Cut(p, "/")
	return token, name, "/" + rest, name != ""
}

// api serves an API route: the request goes to the API's upstream with its
// placeholders replaced by the real credentials.
func (s *Server) api(w http.ResponseWriter, r *http.Request, cfg *compiled) {
	token, name, _, ok := splitAPIPath(r.URL.Path)
	if !ok {
		s.refuse(w, Run{}, Alias, strconv.Itoa(Port), ReasonRoute, "not an API route", http.StatusNotFound)
		return
	}
	run, ok := ParseToken(cfg.key, token)
	if !ok {
		s.refuse(w, Run{}, Alias, strconv.Itoa(Port), ReasonToken, "API route "+name, http.StatusForbidden)
		return
	}
	rt, ok := cfg.apis[name]
	if !ok {
		s.refuse(w, run, Alias, strconv.Itoa(Port), ReasonRoute, "no API named "+name, http.StatusNotFound)
		return
	}
	s.events.api(run.Task)
	rt.proxy.ServeHTTP(w, r)
}

// rewrite points an API request at the upstream and puts the real
// credentials in place of their placeholders.
func (rt *route) rewrite(pr *httputil.ProxyRequest) {
	_, _, rest, _ := splitAPIPath(pr.In.URL.Path)
	out := pr.Out
	out.URL.Scheme = rt.upstream.Scheme
	out.URL.Host = rt.upstream.Host
	out.URL.Path = strings.TrimSuffix(rt.upstream.Path, "/") + rest
	out.URL.RawPath = ""
	out.URL.RawQuery = rt.query.Replace(pr.In.URL.RawQuery)
	out.Host = rt.upstream.Host
	for k, vs := range out.Header {
		for i, v := range vs {
			out.Header[k][i] = rt.header.Replace(v)
		}
	}
	out.Header.Del("Proxy-Authorization")
}

// ErrClosed is returned by Serve after its context ended.
var ErrClosed = errors.New("egress: closed")

// Serve serves the proxy on proxyLn and the control API on controlLn
// until ctx ends, then shuts both down.
func (s *Server) Serve(ctx context.Context, proxyLn, controlLn net.Listener) error {
	proxy := &http.Server{Handler: s, ReadHeaderTimeout: headerTimeout, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	control := &http.Server{Handler: s.controlHandler(), ReadHeaderTimeout: headerTimeout}
	errc := make(chan error, 2)
	go func() { errc <- proxy.Serve(proxyLn) }()
	go func() { errc <- control.Serve(controlLn) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = proxy.Shutdown(sctx)
	_ = control.Shutdown(sctx)
	s.upstream.CloseIdleConnections()
	if err == nil || errors.Is(err, http.ErrServerClosed) {
		return ErrClosed
	}
	return fmt.Errorf("egress: serve: %w", err)
}
