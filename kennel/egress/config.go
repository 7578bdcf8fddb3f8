package egress

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// Names the kennels use to reach the proxy.
const (
	// Alias is the proxy's name on the kennels' network.
	Alias = "fetch-egress"
	// Port is the port it listens on there.
	Port = 3128
	// ControlSocket is the control socket in the proxy's container.
	ControlSocket = "/tmp/fetch-egress/control.sock"
)

// Config is what Fetch hands the proxy. It holds the real credentials: it
// travels only on an exec's stdin into the proxy's container and lives in
// the proxy's memory.
type Config struct {
	// Key signs run tokens (Token).
	Key []byte `json:"key"`
	// APIs are the model APIs reached through the API routes.
	APIs []API `json:"apis,omitempty"`
	// CLIHosts are the hosts each coding CLI may reach through the forward
	// proxy, by harness name.
	CLIHosts map[string][]string `json:"cli_hosts,omitempty"`
	// Workspaces are the hosts the owner allowed, by WorkspaceID.
	Workspaces map[string][]string `json:"workspaces,omitempty"`
}

// API is one model API behind an API route.
type API struct {
	// Name is the route's name: /t/TOKEN/NAME/….
	Name string `json:"name"`
	// Upstream is the API's base URL (scheme, host and an optional path).
	Upstream string `json:"upstream"`
	// Secrets maps each placeholder to the real value it stands for.
	Secrets map[string]string `json:"secrets,omitempty"`
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if len(c.Key) < 16 {
		errs = append(errs, errors.New("key: at least 16 bytes"))
	}
	names := map[string]bool{}
	for _, a := range c.APIs {
		if !routeName.MatchString(a.Name) || names[a.Name] {
			errs = append(errs, fmt.Errorf("api %q: want a unique name of [a-z0-9-]", a.Name))
		}
		names[a.Name] = true
		if _, err := upstreamURL(a.Upstream); err != nil {
			errs = append(errs, fmt.Errorf("api %s: %w", a.Name, err))
		}
		for p, v := range a.Secrets {
			if len(p) < 16 || v == "" {
				errs = append(errs, fmt.Errorf("api %s: a placeholder of at least 16 characters stands for a non-empty value", a.Name))
			}
		}
	}
	check := func(where string, hosts []string) {
		for _, h := range hosts {
			if _, err := CheckHost(h); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
		}
	}
	for cli, hosts := range c.CLIHosts {
		check("cli "+cli, hosts)
	}
	for ws, hosts := range c.Workspaces {
		check("workspace "+ws, hosts)
	}
	if len(errs) > 0 {
		return fmt.Errorf("egress: config: %w", errors.Join(errs...))
	}
	return nil
}

var routeName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// WorkspaceID names a workspace (its absolute path) in tokens and in
// Config.Workspaces: a hash, so that paths never reach the proxy.
func WorkspaceID(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:6])
}

// tokenPart is what a token's fields may hold.
var tokenPart = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// tokenSep separates a token's fields: URL-safe, and in no task id.
const tokenSep = "~"

// Token is the credential a run presents to the proxy: which workspace and
// CLI it is, and which task, signed with key. A run sees only its own.
func Token(key []byte, workspaceID, cli, task string) string {
	body := workspaceID + tokenSep + cli + tokenSep + task
	return body + tokenSep + mac(key, body)
}

func mac(key []byte, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Run is what a valid token says.
type Run struct {
	Workspace, CLI, Task string
}

// ParseToken checks tok against key.
func ParseToken(key []byte, tok string) (Run, bool) {
	parts := strings.Split(tok, tokenSep)
	if len(parts) != 4 || len(key) == 0 {
		return Run{}, false
	}
	for _, p := range parts[:3] {
		if !tokenPart.MatchString(p) {
			return Run{}, false
		}
	}
	body := strings.Join(parts[:3], tokenSep)
	if !hmac.Equal([]byte(parts[3]), []byte(mac(key, body))) {
		return Run{}, false
	}
	return Run{Workspace: parts[0], CLI: parts[1], Task: parts[2]}, true
}

// APIBase is the base URL of the API route name for a run's token: what
// the CLI is given instead of its API's address.
func APIBase(token, name string) string {
	return fmt.Sprintf("http://%s:%d/t/%s/%s", Alias, Port, token, name)
}

// ProxyURL is the forward proxy's URL for a run (HTTPS_PROXY).
func ProxyURL(token string) string {
	return fmt.Sprintf("http://run:%s@%s:%d", token, Alias, Port)
}

// Env is the environment that sends a run's traffic through the proxy.
func Env(token string) []string {
	p := ProxyURL(token)
	noProxy := "localhost,127.0.0.1,::1," + Alias
	return []string{
		"HTTPS_PROXY=" + p, "https_proxy=" + p,
		"HTTP_PROXY=" + p, "http_proxy=" + p,
		"ALL_PROXY=" + p, "all_proxy=" + p,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

// HostForm is the form CheckHost accepts, for error messages.
const HostForm = "a host name such as registry.npmjs.org, *.example.com for its subdomains, or a public IP address (no scheme, port or path)"

// ErrHost is an allowlist entry CheckHost refuses.
var ErrHost = errors.New("not a host the kennel may be allowed")

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// CheckHost checks an allowlist entry and returns it in its canonical form
// (lower case, no trailing dot): a host name of at least two labels, a
// wildcard "*.domain" whose domain has at least two labels (never a
// top-level domain alone), or a public IP address.
func CheckHost(entry string) (string, error) {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(entry)), ".")
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%q: %s: %w; want %s", entry, why, ErrHost, HostForm)
	}
	if h == "" {
		return bad("empty")
	}
	if strings.ContainsAny(h, "/:@?#[] \t") && !isIPv6(h) {
		return bad("a URL or a host with a port")
	}
	if addr, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if reason := forbidden(addr); reason != "" || addr.IsPrivate() || isShared(addr) {
			return bad("a private or special address")
		}
		return addr.String(), nil
	}
	name := h
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		name = rest
		if strings.Count(name, ".") < 1 {
			return bad("a wildcard on a top-level domain")
		}
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return bad("a single-label name")
	}
	for _, l := range labels {
		if !hostLabel.MatchString(l) {
			return bad("not a host name")
		}
	}
	if _, err := netip.ParseAddr(name); err == nil || allDigits(labels[len(labels)-1]) {
		return bad("not a host name")
	}
	return h, nil
}

func isIPv6(h string) bool {
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Is6()
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// matchHost reports whether host (canonical) is one of entries.
func matchHost(entries []string, host string) bool {
	return slices.ContainsFunc(entries, func(e string) bool {
		if suffix, ok := strings.CutPrefix(e, "*"); ok {
			return strings.HasSuffix(host, suffix)
		}
		return e == host
	})
}

// canonicalHost lower-cases a requested host and strips a trailing dot and
// IPv6 brackets.
func canonicalHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		if a, ok := netip.AddrFromSlice(ip); ok {
			return a.Unmap().String()
		}
	}
	return h
}
