package egress

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

const (
	placeholder = "fetch-placeholder-anthropic-0001"
	realKey     = "sk-ant-real-key-never-in-the-kennel"
)

// fakeNet resolves names of its table to documentation or special
// addresses and dials each of those to a server on loopback, so that the
// rules are tested without any traffic leaving the machine.
type fakeNet struct {
	mu    sync.Mutex
	names map[string][]netip.Addr
	to    map[string]string // "addr:port" → 127.0.0.1:port
	dials []string
}

func (f *fakeNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := f.names[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func (f *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dials = append(f.dials, addr)
	target, ok := f.to[addr]
	f.mu.Unlock()
	if strings.HasPrefix(addr, "127.0.0.1:") {
		target, ok = addr, true // an API upstream the test serves
	}
	if !ok {
		return nil, errors.New("fakeNet: no route to " + addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func (f *fakeNet) dialed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dials...)
}

// setup starts a proxy with one API route (anthropic, to upstream) and the
// rules: claude may reach cli.example.org; workspace ws1's owner allowed
// owner.example.org and *.corp.example.
func setup(t *testing.T, upstream string, fn *fakeNet) (*Server, *httptest.Server) {
	t.Helper()
	gw := netip.MustParseAddr("172.17.0.1")
	s := NewServer(Options{Resolve: fn.resolve, Dial: fn.dial, Gateways: []netip.Addr{gw}})
	err := s.Configure(Config{
		Key:        testKey,
		APIs:       []API{{Name: "anthropic", Upstream: upstream, Secrets: map[string]string{placeholder: realKey}}},
		CLIHosts:   map[string][]string{"claude": {"cli.example.org", "private-cli.example.org", "meta.example.org"}},
		Workspaces: map[string][]string{"ws1": {"owner.example.org", "*.corp.example", "meta-owner.example.org", "gw.example.org"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := httptest.NewServer(s)
	t.Cleanup(p.Close)
	return s, p
}

func TestCheckHost(t *testing.T) {
	good := map[string]string{
		"registry.npmjs.org":  "registry.npmjs.org",
		"Registry.NPMJS.org.": "registry.npmjs.org",
		"*.example.com":       "*.example.com",
		"8.8.8.8":             "8.8.8.8",
		"2001:4860::8888":     "2001:4860::8888",
	}
	for in, want := range good {
		got, err := CheckHost(in)
		if err != nil || got != want {
			t.Errorf("CheckHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{"", "https://example.com/path", "example.com/x", "example.com:443", "*.com", "*", "localhost",
		"10.0.0.1", "192.168.1.10", "172.16.5.4", "169.254.169.254", "127.0.0.1", "100.64.0.1", "fd00:ec2::254", "::1",
		"ex ample.com", "user@example.com", "1.2.3", "-bad.example.com"}
	for _, in := range bad {
		if got, err := CheckHost(in); err == nil || !errors.Is(err, ErrHost) {
			t.Errorf("CheckHost(%q) = %q, %v; want ErrHost", in, got, err)
		} else if !strings.Contains(err.Error(), "want a host name") {
			t.Errorf("CheckHost(%q): %v does not say the form it expects", in, err)
		}
	}
}

func TestToken(t *testing.T) {
	tok := Token(testKey, "ws1", "claude", "t-42")
	run, ok := ParseToken(testKey, tok)
	if !ok || run != (Run{Workspace: "ws1", CLI: "claude", Task: "t-42"}) {
		t.Fatalf("ParseToken(%q) = %+v, %v", tok, run, ok)
	}
	for _, bad := range []string{
		strings.Replace(tok, "t-42", "t-43", 1),
		strings.Replace(tok, "ws1", "ws2", 1),
		tok[:len(tok)-1] + "0",
		"ws1~claude~t-42",
		"",
	} {
		if _, ok := ParseToken(testKey, bad); ok {
			t.Errorf("ParseToken(%q) accepted a forged token", bad)
		}
	}
	if _, ok := ParseToken([]byte("another key of 32 bytes........."), tok); ok {
		t.Error("a token passed under another key")
	}
}

// TestAPIRouteAddsTheKey: the upstream gets the real key in place of the
// placeholder (headers and query), the path under the route, the body
// streamed; the kennel's side never sees the key.
func TestAPIRouteAddsTheKey(t *testing.T) {
	var got http.Header
	var gotURL string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, gotURL = r.Header.Clone(), r.URL.String()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: echo "+string(body)+"\n\n")
	}))
	defer up.Close()
	s, p := setup(t, up.URL+"/base", &fakeNet{})
	tok := Token(testKey, "ws1", "claude", "t1")
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/t/"+tok+"/anthropic/v1/messages?key="+placeholder+"&beta=true", strings.NewReader("hello"))
	req.Header.Set("x-api-key", placeholder)
	req.Header.Set("Authorization", "Bearer "+placeholder)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "data: echo hello\n\n" {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
	if got.Get("x-api-key") != realKey || got.Get("Authorization") != "Bearer "+realKey {
		t.Errorf("upstream headers: x-api-key %q, Authorization %q; want the real key", got.Get("x-api-key"), got.Get("Authorization"))
	}
	if want := "/base/v1/messages?key=" + url.QueryEscape(realKey) + "&beta=true"; gotURL != want {
		t.Errorf("upstream URL %q, want %q", gotURL, want)
	}
	if strings.Contains(gotURL, tok) || strings.Contains(got.Get("Proxy-Authorization"), tok) {
		t.Error("the run token reached the upstream")
	}
	if r := s.events.take("t1", false); r.APICalls != 1 || r.Total() != 0 {
		t.Errorf("report %+v, want one API call and no refusal", r)
	}
}

func TestAPIRouteRefusals(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the upstream was reached: %s", r.URL)
	}))
	defer up.Close()
	s, p := setup(t, up.URL, &fakeNet{})
	forged := strings.Replace(Token(testKey, "ws1", "claude", "t1"), "t1", "t2", 1)
	for path, want := range map[string]int{
		"/t/" + forged + "/anthropic/v1/messages":                         http.StatusForbidden,
		"/t/" + Token(testKey, "ws1", "claude", "t1") + "/openai/v1/chat": http.StatusNotFound,
		"/v1/messages": http.StatusNotFound,
		"/t/" + Token([]byte("wrong key, 32 bytes long........"), "ws1", "c", "x") + "/anthropic/": http.StatusForbidden,
	} {
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if r := s.events.take("", false); r.Total() < 2 {
		t.Errorf("tokenless refusals %+v, want them recorded", r)
	}
}

// proxyClient is a client whose traffic goes through the proxy with tok.
func proxyClient(proxy, tok string) *http.Client {
	u, _ := url.Parse(proxy)
	u.User = url.UserPassword("run", tok)
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(u),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the fake's certificate names 127.0.0.1
	}}
}

// TestForwardProxyRules: a host on the run's list is reached (and gets no
// credential added); others, and addresses no run may reach, are refused
// and recorded with their reason.
func TestForwardProxyRules(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	tlsUp := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host+" "+r.Header.Get("x-api-key"))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer tlsUp.Close()
	plainUp := httptest.NewServer(tlsUp.Config.Handler)
	defer plainUp.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsUp.Listener.Addr().String())
	_, plainPort, _ := net.SplitHostPort(plainUp.Listener.Addr().String())
	fn := &fakeNet{
		names: map[string][]netip.Addr{
			"cli.example.org":         {netip.MustParseAddr("203.0.113.10")},
			"owner.example.org":       {netip.MustParseAddr("10.9.0.7")},
			"db.corp.example":         {netip.MustParseAddr("192.168.7.7")},
			"private-cli.example.org": {netip.MustParseAddr("10.9.0.8")},
			"meta.example.org":        {netip.MustParseAddr("169.254.169.254")},
			"meta-owner.example.org":  {netip.MustParseAddr("169.254.169.254")},
			"gw.example.org":          {netip.MustParseAddr("172.17.0.1")},
			"other.example.org":       {netip.MustParseAddr("203.0.113.11")},
		},
		to: map[string]string{},
	}
	for _, a := range []string{"203.0.113.10", "10.9.0.7", "192.168.7.7", "203.0.113.11", "10.9.0.8", "169.254.169.254", "172.17.0.1"} {
		fn.to[a+":"+tlsPort] = "127.0.0.1:" + tlsPort
		fn.to[a+":"+plainPort] = "127.0.0.1:" + plainPort
	}
	s, p := setup(t, "https://api.example.org", fn)
	c := proxyClient(p.URL, Token(testKey, "ws1", "claude", "t1"))
	get := func(u string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("x-api-key", placeholder)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		url    string
		ok     bool
		reason string
	}{
		{"https://cli.example.org:" + tlsPort + "/", true, ""},
		{"http://cli.example.org:" + plainPort + "/", true, ""},
		{"https://owner.example.org:" + tlsPort + "/", true, ""}, // private, but named by the owner
		{"https://db.corp.example:" + tlsPort + "/", true, ""},   // the owner's wildcard
		{"https://other.example.org:" + tlsPort + "/", false, ReasonNotAllowed},
		{"https://private-cli.example.org:" + tlsPort + "/", false, ReasonAddress}, // private, named only by the CLI's list
		{"https://meta.example.org:" + tlsPort + "/", false, ReasonAddress},
		{"https://meta-owner.example.org:" + tlsPort + "/", false, ReasonAddress}, // metadata: never, even named by the owner
		{"https://gw.example.org:" + tlsPort + "/", false, ReasonAddress},         // the host machine: never
		{"https://172.17.0.1:" + tlsPort + "/", false, ReasonNotAllowed},
		{"https://169.254.169.254/", false, ReasonNotAllowed},
		{"http://[fd00:ec2::254]/latest/meta-data/", false, ReasonNotAllowed},
	} {
		code, body := get(tc.url)
		if tc.ok && (code != 200 || body != "ok") {
			t.Errorf("%s: %d %q, want it reached", tc.url, code, body)
		}
		if !tc.ok && code == 200 {
			t.Errorf("%s: reached, want refused (%s)", tc.url, tc.reason)
		}
	}
	for _, s := range seen {
		if strings.Contains(s, realKey) || !strings.HasSuffix(s, placeholder) {
			t.Errorf("forwarded request %q: the placeholder must pass unchanged", s)
		}
	}
	rep := s.events.take("t1", true)
	var reasons []string
	for _, r := range rep.Refusals {
		reasons = append(reasons, r.Host+"="+r.Reason)
		if r.Task != "t1" || r.CLI != "claude" || r.Workspace != "ws1" {
			t.Errorf("refusal %+v not attributed to the run", r)
		}
	}
	want := []string{"other.example.org=not_allowed", "private-cli.example.org=address", "meta.example.org=address",
		"meta-owner.example.org=address", "gw.example.org=address", "172.17.0.1=not_allowed", "169.254.169.254=not_allowed", "fd00:ec2::254=not_allowed"}
	if strings.Join(reasons, " ") != strings.Join(want, " ") {
		t.Errorf("refusals\n %v\nwant\n %v", reasons, want)
	}
	if rep.Passed != 4 {
		t.Errorf("passed %d, want 4", rep.Passed)
	}
	for _, d := range fn.dialed() {
		for _, never := range []string{"169.254.169.254", "172.17.0.1", "10.9.0.8"} {
			if strings.HasPrefix(d, never+":") {
				t.Errorf("the proxy dialed %s", d)
			}
		}
	}
	if s.events.take("t1", false).Total() != 0 {
		t.Error("forget kept the report")
	}
}

func TestForwardProxyWithoutToken(t *testing.T) {
	s, p := setup(t, "https://api.example.org", &fakeNet{})
	for _, tok := range []string{"", "ws1~claude~t1~00000000000000000000000000000000"} {
		c := proxyClient(p.URL, tok)
		resp, err := c.Get("http://cli.example.org/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("token %q: %d, want 407", tok, resp.StatusCode)
		}
	}
	if s.events.take("", false).Total() != 2 {
		t.Error("refusals without a token not recorded")
	}
}

func TestUnconfiguredRefusesEverything(t *testing.T) {
	p := httptest.NewServer(NewServer(Options{Gateways: []netip.Addr{}}))
	defer p.Close()
	resp, err := http.Get(p.URL + "/t/x/anthropic/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "way out is down") {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Key: []byte("short")},
		{Key: testKey, APIs: []API{{Name: "Bad Name", Upstream: "https://x.example"}}},
		{Key: testKey, APIs: []API{{Name: "a", Upstream: "ftp://x.example"}}},
		{Key: testKey, APIs: []API{{Name: "a", Upstream: "https://x.example", Secrets: map[string]string{"short": "v"}}}},
		{Key: testKey, Workspaces: map[string][]string{"w": {"10.0.0.1"}}},
		{Key: testKey, CLIHosts: map[string][]string{"c": {"*.com"}}},
	}
	for i, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}

// TestControl: configure, health and events through the control socket's
// handler, as fetch-shim egress does.
func TestControl(t *testing.T) {
	s := NewServer(Options{Gateways: []netip.Addr{}})
	h := httptest.NewServer(s.controlHandler())
	defer h.Close()
	raw, _ := json.Marshal(Config{Key: testKey, CLIHosts: map[string][]string{"claude": {"cli.example.org"}}})
	resp, err := http.Post(h.URL+"/config", "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var health Health
	_ = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if !health.Configured || health.Hash == "" || health.Hash != s.Hash() {
		t.Fatalf("health %+v", health)
	}
	resp, _ = http.Post(h.URL+"/config", "application/json", strings.NewReader(`{"key":"c2hvcnQ="}`))
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || s.Hash() != health.Hash {
		t.Errorf("a bad config: %d, hash %s; want 400 and the old config kept", resp.StatusCode, s.Hash())
	}
}
