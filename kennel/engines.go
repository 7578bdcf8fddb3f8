package kennel

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/client"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// EngineKind says how Fetch reaches a Docker engine. Kinds are persisted in
// logs and configuration dumps as their string.
type EngineKind string

const (
	// EngineLocal is the engine the environment gives: DOCKER_HOST (with
	// DOCKER_TLS_VERIFY and DOCKER_CERT_PATH) or the default socket.
	EngineLocal EngineKind = "local"
	// EngineContext is a docker CLI context, looked up in the CLI's store.
	EngineContext EngineKind = "context"
	// EngineSSH is an engine behind an SSH server: its unix socket is dialed
	// through one SSH connection.
	EngineSSH EngineKind = "ssh"
	// EngineTCP is an engine listening on TCP, with TLS.
	EngineTCP EngineKind = "tcp"
	// EngineUnix is an engine on a local unix socket.
	EngineUnix EngineKind = "unix"
)

// LocalEngine is the name of the engine the environment gives; DefaultContext
// is the docker CLI's name for the same.
const (
	LocalEngine    = "local"
	DefaultContext = "default"
)

// Defaults of the engine specification.
const (
	// RemoteSocket is the Docker socket dialed on the far side of an SSH
	// connection.
	RemoteSocket = "/var/run/docker.sock"
	// DefaultSocket is the local engine's socket when DOCKER_HOST is unset.
	DefaultSocket = "unix:///var/run/docker.sock"
	// defaultSSHPort and defaultTLSPort complete addresses without a port.
	defaultSSHPort = "22"
	defaultTLSPort = "2376"
)

// Query parameters of an engine URL.
const (
	paramKey        = "key"
	paramKnownHosts = "known_hosts"
	paramCerts      = "certs"
)

// TLS material file names, in a cert directory (DOCKER_CERT_PATH, ?certs=)
// and in a docker context's TLS directory alike.
const (
	caFile   = "ca.pem"
	certFile = "cert.pem"
	keyFile  = "key.pem"
)

// defaultSSHKeys are tried in this order when an ssh engine names no key.
var defaultSSHKeys = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

var engineNamePattern = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// EngineSpec is one engine of FETCH_ENGINES. ParseEngines fills Name, Kind
// and, for a URL, the endpoint fields; Resolve turns a local or context spec
// into the endpoint it stands for and fills in the default files.
type EngineSpec struct {
	// Name is how Fetch calls the engine: [a-z0-9-]{1,32}, unique.
	Name string
	// Kind is how the engine is reached; after Resolve it is EngineSSH,
	// EngineTCP or EngineUnix.
	Kind EngineKind
	// Context is the docker context the spec came from, if any.
	Context string

	// Host is the endpoint: ssh://user@host:port, tcp://host:port or
	// unix:///path (without the query).
	Host string
	// KeyFile and KnownHosts are the SSH user key and known_hosts file.
	KeyFile    string
	KnownHosts string
	// CertDir holds ca.pem, cert.pem and key.pem for tcp; "" means plain
	// TCP, which only a docker context or DOCKER_HOST may ask for.
	CertDir string
	// SkipTLSVerify does not check the engine's certificate (a docker
	// context's SkipTLSVerify; DOCKER_TLS_VERIFY unset with a cert dir).
	SkipTLSVerify bool
}

// String is the spec as a log line shows it: name, kind and endpoint, no
// file paths.
func (s EngineSpec) String() string {
	switch {
	case s.Host != "":
		return fmt.Sprintf("%s (%s)", s.Name, s.Host)
	case s.Kind == EngineContext:
		return fmt.Sprintf("%s (docker context %s)", s.Name, s.Context)
	default:
		return s.Name
	}
}

// ParseEngines parses FETCH_ENGINES, the Docker engines Fetch may use:
//
//	FETCH_ENGINES = entry *("," entry)      (spaces around entries ignored)
//	entry         = NAME "=" URL | NAME
//
// NAME is [a-z0-9-]{1,32}; names are unique. A bare NAME is "local" — the
// engine the environment gives: DOCKER_HOST (with DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH) or the default socket, as the docker CLI without a
// context — or else a docker context of that name ("default" is local
// too), looked up in the docker CLI's store ($DOCKER_CONFIG or ~/.docker)
// when the engine is resolved. URL is one of:
//
//	ssh://USER@HOST[:PORT][?key=FILE][&known_hosts=FILE]
//	    the engine's /var/run/docker.sock through one SSH connection; the
//	    key defaults to the first of ~/.ssh/id_ed25519, id_ecdsa, id_rsa,
//	    known_hosts to ~/.ssh/known_hosts (the host must be in it).
//	tcp://HOST[:PORT]?certs=DIR
//	    TLS (port 2376 by default), DIR holding ca.pem, cert.pem and key.pem
//	    as DOCKER_CERT_PATH does; plain TCP is refused.
//	unix:///PATH
//	    a socket on this machine.
//
// FILE and DIR are absolute or start with "~/". An empty spec is the local
// engine alone. Example:
//
//	local,gpu=ssh://fetch@gpu.lan?key=~/.ssh/fetch_ed25519,ci=tcp://10.0.0.5?certs=/etc/fetch/ci
//
// Every problem of the spec is reported at once; the errors wrap ErrInvalid.
func ParseEngines(spec string) ([]EngineSpec, error) {
	if strings.TrimSpace(spec) == "" {
		return []EngineSpec{{Name: LocalEngine, Kind: EngineLocal}}, nil
	}
	var (
		specs []EngineSpec
		errs  []error
		seen  = map[string]bool{}
	)
	for i, entry := range strings.Split(spec, ",") {
		s, err := parseEngine(strings.TrimSpace(entry))
		if err != nil {
			errs = append(errs, fmt.Errorf("FETCH_ENGINES entry %d: %w", i+1, err))
			continue
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("FETCH_ENGINES entry %d: engine %q named twice: %w", i+1, s.Name, ErrInvalid))
			continue
		}
		seen[s.Name] = true
		specs = append(specs, s)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("kennel: %w", errors.Join(errs...))
	}
	return specs, nil
}

// parseEngine parses one entry of FETCH_ENGINES.
func parseEngine(entry string) (EngineSpec, error) {
	if entry == "" {
		return EngineSpec{}, fmt.Errorf("empty entry: %w", ErrInvalid)
	}
	name, rawURL, hasURL := strings.Cut(entry, "=")
	name = strings.TrimSpace(name)
	if !engineNamePattern.MatchString(name) {
		return EngineSpec{}, fmt.Errorf("engine name %q: want 1 to 32 of a-z, 0-9 and '-': %w", name, ErrInvalid)
	}
	if !hasURL {
		if name == LocalEngine || name == DefaultContext {
			return EngineSpec{Name: name, Kind: EngineLocal}, nil
		}
		return EngineSpec{Name: name, Kind: EngineContext, Context: name}, nil
	}
	if name == LocalEngine || name == DefaultContext {
		return EngineSpec{}, fmt.Errorf("engine %q: the name is the environment's engine and takes no URL: %w", name, ErrInvalid)
	}
	s, err := parseEngineURL(strings.TrimSpace(rawURL), true)
	if err != nil {
		return EngineSpec{}, fmt.Errorf("engine %q: %w", name, err)
	}
	s.Name = name
	return s, nil
}

// parseEngineURL parses an engine URL; withQuery allows the options of
// FETCH_ENGINES (DOCKER_HOST and contexts have none).
func parseEngineURL(raw string, withQuery bool) (EngineSpec, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return EngineSpec{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	q := u.Query()
	if !withQuery && u.RawQuery != "" {
		return EngineSpec{}, fmt.Errorf("%s: no options allowed here: %w", raw, ErrInvalid)
	}
	take := func(key string) (string, error) {
		v := q.Get(key)
		q.Del(key)
		if v == "" || strings.HasPrefix(v, "~/") || filepath.IsAbs(v) {
			return v, nil
		}
		return "", fmt.Errorf("%s=%s: want an absolute path or one starting with ~/: %w", key, v, ErrInvalid)
	}
	var s EngineSpec
	switch u.Scheme {
	case "ssh":
		if u.User == nil || u.User.Username() == "" {
			return EngineSpec{}, fmt.Errorf("%s: want ssh://USER@HOST[:PORT]: %w", redact(u), ErrInvalid)
		}
		if _, has := u.User.Password(); has {
			return EngineSpec{}, fmt.Errorf("%s: no password in the URL; Fetch logs in with a key: %w", redact(u), ErrInvalid)
		}
		if u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return EngineSpec{}, fmt.Errorf("%s: want ssh://USER@HOST[:PORT]: %w", redact(u), ErrInvalid)
		}
		port := u.Port()
		if port == "" {
			port = defaultSSHPort
		}
		s = EngineSpec{Kind: EngineSSH, Host: "ssh://" + u.User.Username() + "@" + net.JoinHostPort(u.Hostname(), port)}
		if s.KeyFile, err = take(paramKey); err != nil {
			return EngineSpec{}, err
		}
		if s.KnownHosts, err = take(paramKnownHosts); err != nil {
			return EngineSpec{}, err
		}
	case "tcp":
		if u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
			return EngineSpec{}, fmt.Errorf("%s: want tcp://HOST[:PORT]: %w", redact(u), ErrInvalid)
		}
		port := u.Port()
		if port == "" {
			port = defaultTLSPort
		}
		s = EngineSpec{Kind: EngineTCP, Host: "tcp://" + net.JoinHostPort(u.Hostname(), port)}
		if s.CertDir, err = take(paramCerts); err != nil {
			return EngineSpec{}, err
		}
		if withQuery && s.CertDir == "" {
			return EngineSpec{}, fmt.Errorf("%s: plain TCP gives root on the engine to anyone on the network; add ?certs=DIR with ca.pem, cert.pem and key.pem: %w", s.Host, ErrInvalid)
		}
	case "unix":
		if u.Host != "" || u.Path == "" || !filepath.IsAbs(u.Path) {
			return EngineSpec{}, fmt.Errorf("%s: want unix:///PATH: %w", raw, ErrInvalid)
		}
		s = EngineSpec{Kind: EngineUnix, Host: "unix://" + u.Path}
	default:
		return EngineSpec{}, fmt.Errorf("%s: want an ssh://, tcp:// or unix:// URL: %w", redact(u), ErrInvalid)
	}
	if len(q) > 0 {
		var keys []string
		for k := range q {
			keys = append(keys, k)
		}
		return EngineSpec{}, fmt.Errorf("%s: unknown option %s: %w", s.Host, strings.Join(keys, ", "), ErrInvalid)
	}
	return s, nil
}

// redact is u without its query and password, for messages.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	return c.Redacted()
}

// DialConfig is what resolving and dialing an engine take from the
// process's environment and from the caller; cmd/fetch fills it once.
// Packages never read the environment themselves.
type DialConfig struct {
	// Home is the user's home directory: "~/" in paths, ~/.ssh, ~/.docker.
	Home string
	// DockerConfig is $DOCKER_CONFIG, the docker CLI's configuration
	// directory; "" means Home/.docker.
	DockerConfig string
	// DockerHost, DockerTLSVerify and DockerCertPath are $DOCKER_HOST,
	// $DOCKER_TLS_VERIFY (non-empty: verify) and $DOCKER_CERT_PATH, the
	// local engine.
	DockerHost      string
	DockerTLSVerify bool
	DockerCertPath  string
	// DockerContext is $DOCKER_CONTEXT: the local engine is that docker
	// context's when DOCKER_HOST is unset; "" falls back to the CLI's
	// current context (config.json), then the default socket.
	DockerContext string
	// Now tells the time, to check TLS material; nil is time.Now.
	Now func() time.Time
	// Logger receives what happens to connections after Dial (an SSH
	// connection that dropped); nil discards.
	Logger *slog.Logger
}

// Resolve returns the endpoint s stands for: the local engine's from the
// environment, a docker context's from the CLI's store, with "~/" expanded
// and the default SSH files filled in (the first default key that exists).
// It reads files but connects to nothing; an unknown context or a missing
// file is an error naming the engine.
func (s EngineSpec) Resolve(cfg DialConfig) (EngineSpec, error) {
	r := s
	switch s.Kind {
	case EngineLocal:
		host := cfg.DockerHost
		if host == "" {
			if name := currentContext(cfg); name != "" && name != "default" {
				ep, err := lookupContext(cfg, name)
				if err != nil {
					return EngineSpec{}, fmt.Errorf("kennel: engine %q (the docker CLI's current context): %w", s.Name, err)
				}
				ep.Name, ep.Context = s.Name, name
				return ep, nil
			}
			host = DefaultSocket
		}
		ep, err := parseEngineURL(host, false)
		if err != nil {
			return EngineSpec{}, fmt.Errorf("kennel: engine %q: DOCKER_HOST: %w", s.Name, err)
		}
		r.Kind, r.Host = ep.Kind, ep.Host
		if ep.Kind == EngineTCP && cfg.DockerCertPath != "" {
			r.CertDir = cfg.DockerCertPath
			r.SkipTLSVerify = !cfg.DockerTLSVerify
		} else if ep.Kind == EngineTCP && cfg.DockerTLSVerify {
			r.CertDir = dockerConfigDir(cfg) // the CLI's default: ~/.docker holds ca.pem…
		}
	case EngineContext:
		ep, err := lookupContext(cfg, s.Context)
		if err != nil {
			return EngineSpec{}, fmt.Errorf("kennel: engine %q: %w", s.Name, err)
		}
		r.Kind, r.Host, r.CertDir, r.SkipTLSVerify = ep.Kind, ep.Host, ep.CertDir, ep.SkipTLSVerify
	case EngineSSH, EngineTCP, EngineUnix:
	default:
		return EngineSpec{}, fmt.Errorf("kennel: engine %q: unknown kind %q: %w", s.Name, s.Kind, ErrInvalid)
	}
	if r.Kind == EngineSSH {
		if err := r.sshDefaults(cfg.Home); err != nil {
			return EngineSpec{}, fmt.Errorf("kennel: engine %q: %w", s.Name, err)
		}
	}
	r.CertDir = expandHome(r.CertDir, cfg.Home)
	return r, nil
}

// sshDefaults fills in the key and known_hosts files.
func (s *EngineSpec) sshDefaults(home string) error {
	sshDir := filepath.Join(home, ".ssh")
	s.KnownHosts = expandHome(s.KnownHosts, home)
	if s.KnownHosts == "" {
		s.KnownHosts = filepath.Join(sshDir, "known_hosts")
	}
	s.KeyFile = expandHome(s.KeyFile, home)
	if s.KeyFile != "" {
		return nil
	}
	var tried []string
	for _, name := range defaultSSHKeys {
		p := filepath.Join(sshDir, name)
		if _, err := os.Stat(p); err == nil {
			s.KeyFile = p
			return nil
		}
		tried = append(tried, p)
	}
	return fmt.Errorf("no SSH key: none of %s exists; make one (ssh-keygen -t ed25519) or name it with ?key=FILE: %w",
		strings.Join(tried, ", "), ErrInvalid)
}

// expandHome replaces a leading "~/" with home.
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// dockerConfigDir is $DOCKER_CONFIG or ~/.docker.
func dockerConfigDir(cfg DialConfig) string {
	if cfg.DockerConfig != "" {
		return cfg.DockerConfig
	}
	return filepath.Join(cfg.Home, ".docker")
}

// currentContext is the docker context the docker CLI would use:
// $DOCKER_CONTEXT, else config.json's currentContext ("" when neither).
func currentContext(cfg DialConfig) string {
	if cfg.DockerContext != "" {
		return cfg.DockerContext
	}
	b, err := os.ReadFile(filepath.Join(dockerConfigDir(cfg), "config.json"))
	if err != nil {
		return ""
	}
	var conf struct {
		CurrentContext string `json:"currentContext"`
	}
	if json.Unmarshal(b, &conf) != nil {
		return ""
	}
	return conf.CurrentContext
}

// contextMeta is the part of a docker context's meta.json Fetch reads.
type contextMeta struct {
	Name      string
	Endpoints map[string]struct {
		Host          string
		SkipTLSVerify bool
	}
}

// lookupContext reads a docker context from the CLI's store:
// contexts/meta/<sha256 of the name>/meta.json for the endpoint,
// contexts/tls/<sha256>/docker/ for its TLS material.
func lookupContext(cfg DialConfig, name string) (EngineSpec, error) {
	dir := dockerConfigDir(cfg)
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:])
	metaPath := filepath.Join(dir, "contexts", "meta", id, "meta.json")
	b, err := os.ReadFile(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return EngineSpec{}, fmt.Errorf("no docker context %q in %s (docker context ls lists them; docker context create %s --docker host=… makes one), and it is no URL (NAME=ssh://…, tcp://… or unix://…): %w",
			name, filepath.Join(dir, "contexts"), name, ErrInvalid)
	}
	if err != nil {
		return EngineSpec{}, fmt.Errorf("docker context %q: %w", name, err)
	}
	var meta contextMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		return EngineSpec{}, fmt.Errorf("docker context %q: %s: %w", name, metaPath, err)
	}
	ep, ok := meta.Endpoints["docker"]
	if !ok || ep.Host == "" {
		return EngineSpec{}, fmt.Errorf("docker context %q: %s has no docker endpoint: %w", name, metaPath, ErrInvalid)
	}
	s, err := parseEngineURL(ep.Host, false)
	if err != nil {
		return EngineSpec{}, fmt.Errorf("docker context %q: %w", name, err)
	}
	s.SkipTLSVerify = ep.SkipTLSVerify
	if s.Kind == EngineTCP {
		tlsDir := filepath.Join(dir, "contexts", "tls", id, "docker")
		if _, err := os.Stat(tlsDir); err == nil {
			s.CertDir = tlsDir
		}
	}
	return s, nil
}

// Timing of engine connections.
const (
	// engineDialTimeout bounds Dial (connection, handshake, ping) when ctx
	// allows longer.
	engineDialTimeout = 15 * time.Second
	// sshKeepAlive is the interval between keepalive requests on an SSH
	// connection; one not answered within sshKeepAliveTimeout closes the
	// connection, and the next request makes a new one.
	sshKeepAlive        = 30 * time.Second
	sshKeepAliveTimeout = 15 * time.Second
	// sshKeepAliveRequest is OpenSSH's keepalive request; servers answer
	// it, with a failure when they do not know it, which is an answer too.
	sshKeepAliveRequest = "keepalive@openssh.com"
	// sshHTTPHost is the host name in the Docker client's requests over
	// SSH; the dialer ignores it.
	sshHTTPHost = "http://docker"
)

// logEngine is the log key of an engine's name.
const logEngine = "engine"

// Engine is a Docker engine Fetch is connected to: the Docker client (API
// version negotiated; embedded, so an *Engine is a Docker for New) and, for
// an ssh engine, the one SSH connection all its requests go through — plain
// requests and hijacked exec streams alike, each a channel to the engine's
// /var/run/docker.sock. A dropped SSH connection is made again by the next
// request. Safe for concurrent use; Close ends it.
type Engine struct {
	*client.Client
	spec   EngineSpec
	tunnel *sshTunnel // nil unless ssh
}

// Name is the engine's name in FETCH_ENGINES.
func (e *Engine) Name() string { return e.spec.Name }

// Spec is the resolved specification the engine was dialed with.
func (e *Engine) Spec() EngineSpec { return e.spec }

// Close closes the Docker client and the SSH connection, and waits for the
// goroutines the Engine owns (the keepalive, the connection's watcher).
// Streams still open through the SSH connection end. Closing twice is fine.
func (e *Engine) Close() error {
	err := e.Client.Close()
	if e.tunnel != nil {
		e.tunnel.close()
	}
	return err
}

// Dial resolves spec (EngineSpec.Resolve), connects to the engine and pings
// it. Each fault is one error naming the engine and what to do: an unknown
// context or a missing file (ErrInvalid), an SSH host key missing from
// known_hosts or not matching it (ErrHostKey), expired TLS material
// (ErrCertExpired), an engine that does not answer (ErrEngineUnavailable).
// For ssh, Dial starts the keepalive goroutine that Close stops.
func Dial(ctx context.Context, spec EngineSpec, cfg DialConfig) (*Engine, error) {
	e, err := DialDeferred(ctx, spec, cfg)
	if err != nil && e != nil {
		e.Close()
		return nil, err
	}
	return e, err
}

// DialDeferred is Dial for an engine that may be away for now: when it
// does not answer (ErrEngineUnavailable, not a key or certificate fault),
// the Engine is returned along with the error. Its requests fail until the
// engine answers; an ssh engine's connection is made by the first request
// that finds it back. Any other fault returns no Engine.
func DialDeferred(ctx context.Context, spec EngineSpec, cfg DialConfig) (*Engine, error) {
	r, err := spec.Resolve(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(ctx, engineDialTimeout)
	defer cancel()
	var e *Engine
	var away error // the engine did not answer; e is kept
	switch r.Kind {
	case EngineSSH:
		e, err = dialSSH(ctx, r, cfg.Logger.With(logEngine, r.Name))
		if err != nil && e != nil {
			away, err = err, nil
		}
	case EngineTCP:
		e, err = dialTCP(r, cfg.Now())
	case EngineUnix:
		e, err = newEngine(r, nil, client.WithHost(r.Host))
	default:
		err = fmt.Errorf("kennel: engine %q: kind %q after resolving: %w", r.Name, r.Kind, ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	if away != nil {
		return e, away
	}
	if _, err := e.Ping(ctx); err != nil {
		err = pingError(r, err)
		if notAnswering(err) {
			return e, err
		}
		e.Close()
		return nil, err
	}
	return e, nil
}

// notAnswering: err says an engine did not answer, rather than that its
// keys or certificates are wrong.
func notAnswering(err error) bool {
	var (
		unknownCA x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
		alert     tls.AlertError
	)
	return errors.Is(err, ErrEngineUnavailable) && !errors.Is(err, ErrHostKey) && !errors.Is(err, ErrCertExpired) && !errors.Is(err, ErrInvalid) &&
		!errors.As(err, &unknownCA) && !errors.As(err, &invalid) && !errors.As(err, &hostname) && !errors.As(err, &alert)
}

// newEngine makes the Docker client with opts after the common ones.
func newEngine(spec EngineSpec, tunnel *sshTunnel, opts ...client.Opt) (*Engine, error) {
	c, err := client.NewClientWithOpts(append(opts, client.WithAPIVersionNegotiation())...)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: docker client: %w", spec.Name, err)
	}
	return &Engine{Client: c, spec: spec, tunnel: tunnel}, nil
}

// pingError explains why the first ping failed.
func pingError(s EngineSpec, err error) error {
	var (
		unknownCA x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
		alert     tls.AlertError
	)
	switch {
	case errors.Is(err, ErrHostKey), errors.Is(err, ErrInvalid), errors.Is(err, ErrEngineUnavailable):
		return err // already explained by the SSH dialer
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &hostname):
		return fmt.Errorf("kennel: engine %q (%s): its TLS certificate is not valid for Fetch (ca.pem in %s must be the CA that signed it, for this address): %w: %w",
			s.Name, s.Host, s.CertDir, ErrEngineUnavailable, err)
	case errors.As(err, &alert):
		return fmt.Errorf("kennel: engine %q (%s) refused Fetch's client certificate (%s): make a new one signed by the engine's CA: %w: %w",
			s.Name, s.Host, filepath.Join(s.CertDir, certFile), ErrEngineUnavailable, err)
	default:
		return fmt.Errorf("kennel: engine %q (%s) does not answer; check that dockerd runs there and that the address is right: %w: %w",
			s.Name, s.Host, ErrEngineUnavailable, err)
	}
}

// dialTCP makes a client for a tcp engine with the TLS material of its cert
// directory, refusing material that is expired or not yet valid.
func dialTCP(s EngineSpec, now time.Time) (*Engine, error) {
	tr := &http.Transport{}
	if s.CertDir != "" {
		cfg, err := loadTLS(s, now)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	return newEngine(s, nil, client.WithHTTPClient(&http.Client{Transport: tr}), client.WithHost(s.Host))
}

// loadTLS reads ca.pem, cert.pem and key.pem from the cert directory (each
// optional, cert and key together) and checks their validity period.
func loadTLS(s EngineSpec, now time.Time) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: s.SkipTLSVerify}
	read := func(name string) ([]byte, string, error) {
		p := filepath.Join(s.CertDir, name)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p, nil
		}
		if err != nil {
			return nil, p, fmt.Errorf("kennel: engine %q: TLS material: %w", s.Name, err)
		}
		return b, p, nil
	}
	checkDates := func(c *x509.Certificate, path, what string) error {
		switch {
		case now.After(c.NotAfter):
			return fmt.Errorf("kennel: engine %q: the %s %s expired on %s; make a new one (signed by the engine's CA) and put it there: %w",
				s.Name, what, path, c.NotAfter.UTC().Format(time.RFC3339), ErrCertExpired)
		case now.Before(c.NotBefore):
			return fmt.Errorf("kennel: engine %q: the %s %s is valid only from %s; check this machine's clock: %w",
				s.Name, what, path, c.NotBefore.UTC().Format(time.RFC3339), ErrCertExpired)
		}
		return nil
	}

	caPEM, caPath, err := read(caFile)
	if err != nil {
		return nil, err
	}
	if caPEM != nil {
		pool := x509.NewCertPool()
		for rest := caPEM; ; {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			ca, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("kennel: engine %q: %s: %w", s.Name, caPath, err)
			}
			if err := checkDates(ca, caPath, "CA certificate"); err != nil {
				return nil, err
			}
			pool.AddCert(ca)
		}
		cfg.RootCAs = pool
	}
	certPEM, certPath, err := read(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, keyPath, err := read(keyFile)
	if err != nil {
		return nil, err
	}
	switch {
	case certPEM == nil && keyPEM == nil:
		return cfg, nil
	case certPEM == nil || keyPEM == nil:
		return nil, fmt.Errorf("kennel: engine %q: %s and %s go together; one is missing: %w", s.Name, certPath, keyPath, ErrInvalid)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: %s, %s: %w: %w", s.Name, certPath, keyPath, ErrInvalid, err)
	}
	if err := checkDates(pair.Leaf, certPath, "client certificate"); err != nil {
		return nil, err
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg, nil
}

// dialSSH opens the SSH connection of an ssh engine and makes the Docker
// client that dials the engine's socket through it.
func dialSSH(ctx context.Context, s EngineSpec, logger *slog.Logger) (*Engine, error) {
	t, err := newSSHTunnel(s, logger)
	if err != nil {
		return nil, err
	}
	_, away := t.client(ctx)
	if away != nil && !notAnswering(away) {
		t.close()
		return nil, away
	}
	// The SDK dials hijacked streams (exec attach) with the transport's
	// DialContext when it has no TLS configuration, so plain requests and
	// exec streams both go through the tunnel.
	tr := &http.Transport{DialContext: t.dial}
	e, err := newEngine(s, t,
		client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithHost(sshHTTPHost),
		client.WithDialContext(t.dial))
	if err != nil {
		t.close()
		return nil, err
	}
	tr.Proxy = nil // WithHost set the environment's; the tunnel needs none
	return e, away
}

// sshTunnel is an ssh engine's SSH connection, made again on demand after
// it drops. It owns two goroutines: the keepalive (from open to close) and
// a watcher per connection that forgets the connection when it ends.
type sshTunnel struct {
	engine     string
	user       string
	addr       string // host:port
	keyFile    string
	knownHosts string
	signer     ssh.Signer
	check      ssh.HostKeyCallback
	algos      []string // host key algorithms known_hosts has for addr
	log        *slog.Logger

	mu     sync.Mutex // held while connecting
	conn   *ssh.Client
	closed bool

	done chan struct{}
	wg   sync.WaitGroup
}

// newSSHTunnel reads the user key and known_hosts and starts the keepalive;
// it connects to nothing.
func newSSHTunnel(s EngineSpec, logger *slog.Logger) (*sshTunnel, error) {
	u, err := url.Parse(s.Host)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: %w: %w", s.Name, ErrInvalid, err)
	}
	t := &sshTunnel{
		engine:     s.Name,
		user:       u.User.Username(),
		addr:       u.Host,
		keyFile:    s.KeyFile,
		knownHosts: s.KnownHosts,
		log:        logger,
		done:       make(chan struct{}),
	}
	keyPEM, err := os.ReadFile(s.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: SSH key: %w: %w", s.Name, ErrInvalid, err)
	}
	t.signer, err = ssh.ParsePrivateKey(keyPEM)
	var passphrase *ssh.PassphraseMissingError
	if errors.As(err, &passphrase) {
		return nil, fmt.Errorf("kennel: engine %q: the SSH key %s has a passphrase Fetch cannot type; give Fetch a key of its own without one (ssh-keygen -t ed25519 -N '' -f ~/.ssh/fetch_ed25519, its .pub in the engine user's authorized_keys) and name it with ?key=: %w",
			s.Name, s.KeyFile, ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: SSH key %s: %w: %w", s.Name, s.KeyFile, ErrInvalid, err)
	}
	if _, err := os.Stat(s.KnownHosts); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("kennel: engine %q: %s does not exist, so the host key of %s cannot be checked; after checking the key's fingerprint with the host's owner, add it: %s: %w",
			s.Name, s.KnownHosts, t.addr, t.keyscan(), ErrHostKey)
	}
	t.check, err = knownhosts.New(s.KnownHosts)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: known_hosts %s: %w: %w", s.Name, s.KnownHosts, ErrInvalid, err)
	}
	t.algos = hostKeyAlgorithms(t.check, t.addr)
	t.wg.Add(1)
	go t.keepalive()
	return t, nil
}

// keyscan is the command that adds addr's host key to the known_hosts file.
func (t *sshTunnel) keyscan() string {
	host, port, _ := net.SplitHostPort(t.addr)
	if port == defaultSSHPort {
		return fmt.Sprintf("ssh-keyscan %s >> %s", host, t.knownHosts)
	}
	return fmt.Sprintf("ssh-keyscan -p %s %s >> %s", port, host, t.knownHosts)
}

// client returns the open SSH connection, making one when there is none.
func (t *sshTunnel) client(ctx context.Context) (*ssh.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("kennel: engine %q: %w", t.engine, net.ErrClosed)
	}
	if t.conn != nil {
		return t.conn, nil
	}
	c, err := t.connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = c
	t.wg.Add(1)
	go t.watch(c)
	return c, nil
}

// connect dials the SSH server, checks its host key and logs in.
func (t *sshTunnel) connect(ctx context.Context) (*ssh.Client, error) {
	d := net.Dialer{KeepAlive: sshKeepAlive}
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("kennel: engine %q: cannot reach the SSH server %s; check the address and that sshd runs there: %w: %w",
			t.engine, t.addr, ErrEngineUnavailable, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	var (
		presented ssh.PublicKey
		hostKeyOK bool
	)
	cfg := &ssh.ClientConfig{
		User: t.user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(t.signer)},
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			presented = key
			err := t.check(hostname, remote, key)
			hostKeyOK = err == nil
			return err
		},
		HostKeyAlgorithms: t.algos,
	}
	cc, chans, reqs, err := ssh.NewClientConn(conn, t.addr, cfg)
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, t.handshakeError(err, presented, hostKeyOK)
	}
	conn.SetDeadline(time.Time{})
	return ssh.NewClient(cc, chans, reqs), nil
}

// handshakeError explains a failed SSH handshake.
func (t *sshTunnel) handshakeError(err error, presented ssh.PublicKey, hostKeyOK bool) error {
	var (
		keyErr  *knownhosts.KeyError
		revoked *knownhosts.RevokedError
	)
	offered := "(none)"
	if presented != nil {
		offered = presented.Type() + " " + ssh.FingerprintSHA256(presented)
	}
	switch {
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		return fmt.Errorf("kennel: engine %q: the SSH host %s is not in %s; it offers the key %s: if its owner confirms that fingerprint, add it: %s: %w",
			t.engine, t.addr, t.knownHosts, offered, t.keyscan(), ErrHostKey)
	case errors.As(err, &keyErr):
		want := keyErr.Want[0]
		return fmt.Errorf("kennel: engine %q: the SSH host %s offers the key %s, which does not match %s:%d (%s %s): someone may be in between, or the host was reinstalled; if its owner confirms the new key, remove the old one (ssh-keygen -R %s -f %s) and add the new one: %s: %w",
			t.engine, t.addr, offered, want.Filename, want.Line, want.Key.Type(), ssh.FingerprintSHA256(want.Key),
			knownhosts.Normalize(t.addr), t.knownHosts, t.keyscan(), ErrHostKey)
	case errors.As(err, &revoked):
		return fmt.Errorf("kennel: engine %q: the SSH host %s offers the key %s, revoked in %s:%d: %w",
			t.engine, t.addr, offered, revoked.Revoked.Filename, revoked.Revoked.Line, ErrHostKey)
	case hostKeyOK:
		return fmt.Errorf("kennel: engine %q: SSH login as %s at %s with %s failed; the public key (%s.pub) must be in ~%s/.ssh/authorized_keys there: %w: %w",
			t.engine, t.user, t.addr, t.keyFile, t.keyFile, t.user, ErrInvalid, err)
	default:
		return fmt.Errorf("kennel: engine %q: SSH handshake with %s failed: %w: %w", t.engine, t.addr, ErrEngineUnavailable, err)
	}
}

// hostKeyAlgorithms lists the host key algorithms known_hosts has for addr,
// so that the server is asked for a key that can be checked (otherwise it
// may present, say, its ECDSA key when only its Ed25519 key is known, and
// the check fails). Nil (the defaults) when addr is not known.
func hostKeyAlgorithms(check ssh.HostKeyCallback, addr string) []string {
	_, probe, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	signer, err := ssh.NewSignerFromKey(probe)
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	if !errors.As(check(addr, tcpAddr(addr), signer.PublicKey()), &keyErr) {
		return nil
	}
	var algos []string
	for _, k := range keyErr.Want {
		switch typ := k.Key.Type(); typ {
		case ssh.KeyAlgoRSA:
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			algos = append(algos, typ)
		}
	}
	return algos
}

// tcpAddr is addr as the net.Addr knownhosts matches against.
type tcpAddr string

func (a tcpAddr) Network() string { return "tcp" }
func (a tcpAddr) String() string  { return string(a) }

// dial opens a stream to the engine's socket through the SSH connection,
// reconnecting once when the connection turns out to be dead. It is the
// Docker client's dialer, so its errors are opaque (see dialError).
func (t *sshTunnel) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	conn, err := t.dialSocket(ctx)
	if err != nil && ctx.Err() == nil {
		return nil, newDialError(err)
	}
	return conn, err
}

// dialError is a dial failure that keeps its cause in its message only, and
// in its chain the sentinel that says what kind of failure it is. The Docker
// SDK replaces a dial error whose text says "connection refused" (or that
// unwraps to a timeout) by a generic one ("Cannot connect to the Docker
// daemon at http://docker"), which would lose the engine's name and what to
// do; this one it passes on, as "error during connect: …", classified as a
// connection failure (IsErrConnectionFailed).
type dialError struct {
	msg  string
	kind error
}

func newDialError(err error) error {
	kind := ErrEngineUnavailable
	for _, sentinel := range []error{ErrHostKey, ErrInvalid} {
		if errors.Is(err, sentinel) {
			kind = sentinel
		}
	}
	msg := err.Error()
	if errors.Is(err, syscall.ECONNREFUSED) {
		// The SDK's doRequest matches this text; say it differently.
		msg = strings.ReplaceAll(msg, syscall.ECONNREFUSED.Error(), "refused (ECONNREFUSED)")
	}
	return &dialError{msg: msg, kind: kind}
}

func (e *dialError) Error() string { return e.msg }
func (e *dialError) Unwrap() error { return e.kind }

// dialSocket does dial's work.
func (t *sshTunnel) dialSocket(ctx context.Context) (net.Conn, error) {
	for attempt := 1; ; attempt++ {
		c, err := t.client(ctx)
		if err != nil {
			return nil, err
		}
		conn, err := c.DialContext(ctx, "unix", RemoteSocket)
		if err == nil {
			return conn, nil
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) {
			// The connection is fine; the server would not open the socket.
			return nil, fmt.Errorf("kennel: engine %q: the SSH server %s could not open %s; is dockerd running there, and may %s use its socket (the docker group)? %w: %w",
				t.engine, t.addr, RemoteSocket, t.user, ErrEngineUnavailable, err)
		}
		if ctx.Err() != nil || attempt == 2 {
			return nil, fmt.Errorf("kennel: engine %q: through SSH to %s: %w: %w", t.engine, t.addr, ErrEngineUnavailable, err)
		}
		t.drop(c)
	}
}

// drop closes c and forgets it, so that the next dial reconnects.
func (t *sshTunnel) drop(c *ssh.Client) {
	t.mu.Lock()
	if t.conn == c {
		t.conn = nil
	}
	t.mu.Unlock()
	c.Close()
}

// watch forgets c when its connection ends.
func (t *sshTunnel) watch(c *ssh.Client) {
	defer t.wg.Done()
	err := c.Wait()
	t.mu.Lock()
	dropped := t.conn == c && !t.closed
	if t.conn == c {
		t.conn = nil
	}
	t.mu.Unlock()
	if dropped {
		t.log.Warn("kennel: SSH connection to the engine dropped; the next request makes a new one", logErr, err)
	}
}

// keepalive sends a keepalive request every sshKeepAlive and closes a
// connection that does not answer in time, until close.
func (t *sshTunnel) keepalive() {
	defer t.wg.Done()
	tick := time.NewTicker(sshKeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		c := t.conn
		t.mu.Unlock()
		if c == nil {
			continue
		}
		timer := time.AfterFunc(sshKeepAliveTimeout, func() { c.Close() })
		_, _, err := c.SendRequest(sshKeepAliveRequest, true, nil)
		timer.Stop()
		if err != nil {
			c.Close() // watch forgets it
		}
	}
}

// close closes the connection and waits for the goroutines. Idempotent.
func (t *sshTunnel) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	c := t.conn
	t.conn = nil
	t.mu.Unlock()
	close(t.done)
	if c != nil {
		c.Close()
	}
	t.wg.Wait()
}

// Engine errors, besides ErrInvalid and ErrEngineUnavailable.
var (
	// ErrHostKey: an SSH engine's host key is not in known_hosts or does
	// not match it; the error says how to add it.
	ErrHostKey = errors.New("SSH host key not trusted")
	// ErrCertExpired: an engine's TLS material is expired or not yet valid.
	ErrCertExpired = errors.New("TLS certificate expired")
)
