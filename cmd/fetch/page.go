package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/task"
	"github.com/fetch-dev/fetch/internal/taskpage"
)

// pageKeyFile holds the task page's signing key in the data directory.
const pageKeyFile = "page.key"

// defaultPageAddr is where fetch serve serves the task page unless told
// otherwise: loopback only. When the port is taken (another Fetch on this
// machine), the page is left out with a warning.
const defaultPageAddr = "127.0.0.1:8686"

// defaultPageTTL is how long a task page link is valid by default.
const defaultPageTTL = 7 * 24 * time.Hour

const pageUsage = `Usage: fetch page [TASK]

Print a signed link to the task page: the list of tasks (the owner's link,
which opens every task it lists), or with TASK, that task's page only.

"fetch serve" and "fetch chat" serve the page while they run, on
FETCH_PAGE_ADDR (default 127.0.0.1:8686; off turns it off). fetch page
tries the link before it prints it: when nothing serves the page, or
another Fetch or another program answers there, it says so and what to
run, and exits 1. Links are valid for FETCH_PAGE_TTL (default 168h) and
point at FETCH_PAGE_URL (default http://FETCH_PAGE_ADDR). The key that
signs them is $FETCH_DATA_DIR/page.key: remove it to revoke every link
given so far.
`

// loadPage reads the task page's settings. A bare port, or :PORT, binds
// to the loopback address: the page is reachable from elsewhere only when
// a host is named, or through a reverse proxy on this machine.
func (c *Config) loadPage(getenv func(string) string) []string {
	var problems []string
	c.PageTTL = defaultPageTTL
	switch v := strings.TrimSpace(getenv(envPageAddr)); strings.ToLower(v) {
	case "":
		c.PageAddr, c.PageDefault = defaultPageAddr, true
	case "off":
	default:
		if _, err := strconv.Atoi(v); err == nil {
			v = ":" + v
		}
		host, port, err := net.SplitHostPort(v)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 0 || n > 65535 {
			problems = append(problems, fmt.Sprintf("%s must be PORT, :PORT, HOST:PORT or off, such as 8686 or 127.0.0.1:8686, got %q", envPageAddr, v))
			break
		}
		if host == "" {
			host = "127.0.0.1"
		}
		c.PageAddr = net.JoinHostPort(host, port)
	}
	if v := strings.TrimSpace(getenv(envPageURL)); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			problems = append(problems, fmt.Sprintf("%s must be an http(s) URL without query, such as https://fetch.example.com/, got %q", envPageURL, v))
		} else {
			c.PageURL = v
		}
	}
	if v := strings.TrimSpace(getenv(envPageTTL)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			problems = append(problems, fmt.Sprintf("%s must be a duration of at least 1m, such as 168h, got %q", envPageTTL, v))
		} else {
			c.PageTTL = d
		}
	}
	return problems
}

// pageLinks are the task page's links as configured, with base (the
// page's address when FETCH_PAGE_URL is unset).
func pageLinks(cfg Config, base string) (*taskpage.Links, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	key, err := taskpage.LoadKey(filepath.Join(cfg.DataDir, pageKeyFile))
	if err != nil {
		return nil, err
	}
	if cfg.PageURL != "" {
		base = cfg.PageURL
	}
	return taskpage.NewLinks(key, base, cfg.PageTTL, nil)
}

// page is fetch serve's task page: it listens before the conversations
// are built (their results carry its links), and serves once the engine
// it reads exists.
type page struct {
	ln    net.Listener
	links *taskpage.Links
	srv   *taskpage.Server
}

// listenPage listens on FETCH_PAGE_ADDR; nil when the page is off. The
// caller decides what a taken address means: fetch serve fails on one the
// owner named, fetch chat goes on without its page.
func listenPage(ctx context.Context, cfg Config) (*page, error) {
	if cfg.PageAddr == "" {
		return nil, nil
	}
	ln, err := taskpage.Listen(ctx, cfg.PageAddr)
	if err != nil {
		return nil, err
	}
	links, err := pageLinks(cfg, "http://"+ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &page{ln: ln, links: links}, nil
}

// servePage is fetch serve's page: a default address that is taken
// leaves it out with a warning (the owner did not ask for that port, and
// Fetch works without its page); an address the owner named must be
// free.
func servePage(ctx context.Context, cfg Config, log *slog.Logger) (*page, error) {
	pg, err := listenPage(ctx, cfg)
	switch {
	case err == nil:
		return pg, nil
	case cfg.PageDefault && errors.Is(err, syscall.EADDRINUSE):
		log.Warn("the task page is off: its default address is taken; set "+envPageAddr+" to another port", "addr", cfg.PageAddr, "err", err)
		return nil, nil
	}
	return nil, fmt.Errorf("%w (set %s to another address, or off)", err, envPageAddr)
}

// chatPage is fetch chat's page. When its address is taken, the chat goes
// on without it and says so once on stderr, naming what answers there: a
// Fetch on this data directory (whose page shows this chat's tasks too),
// another Fetch, or another program.
func chatPage(ctx context.Context, cfg Config, stderr io.Writer) (*page, error) {
	pg, err := listenPage(ctx, cfg)
	if err == nil {
		return pg, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		fmt.Fprintf(stderr, "fetch chat: going on without the task page: %v. Set %s to a free address (such as 8687), or off.\n", err, envPageAddr)
		return nil, nil
	}
	base := pageBase(cfg)
	links, lerr := pageLinks(cfg, base)
	if lerr != nil {
		return nil, lerr
	}
	switch _, ans, detail := probePage(ctx, links, ""); ans {
	case pageWorks:
		fmt.Fprintf(stderr, "fetch chat: the task page is served by another Fetch on this data directory, at %s; its links (fetch page) show this chat's tasks too.\n", base)
	case pageForeign:
		fmt.Fprintf(stderr, "fetch chat: going on without the task page: another Fetch, on another data directory, serves its address %s (%s). Set %s to a free port (such as 8687) to have the page here.\n", cfg.PageAddr, detail, envPageAddr)
	default:
		fmt.Fprintf(stderr, "fetch chat: going on without the task page: its address %s is taken (%s). Set %s to a free port (such as 8687) to have the page here.\n", cfg.PageAddr, detail, envPageAddr)
	}
	return nil, nil
}

// pageBase is where the page's links point: FETCH_PAGE_URL, or the
// page's own address.
func pageBase(cfg Config) string {
	if cfg.PageURL != "" {
		return cfg.PageURL
	}
	return "http://" + cfg.PageAddr
}

// addr is the address the page listens on.
func (p *page) addr() string { return "http://" + p.ln.Addr().String() }

// link is the link to a task's page for its result; nil without a page.
func (p *page) link() func(string) string {
	if p == nil {
		return nil
	}
	return p.links.Task
}

// open serves the page over the engine's store.
func (p *page) open(ctx context.Context, cfg Config, tasks *task.Engine, red *redact.Redactor, log *slog.Logger) error {
	if p == nil {
		return nil
	}
	srv, err := taskpage.New(taskpage.Config{
		Tasks: tasks, Links: p.links, Redactor: red,
		PatchDir: filepath.Join(cfg.DataDir, "patches"),
		Logger:   log.With("component", "taskpage"),
		Location: cfg.Location,
		Repos:    filepath.Join(cfg.DataDir, "repos"),
	})
	if err != nil {
		p.ln.Close()
		return err
	}
	if err := srv.Open(ctx, p.ln); err != nil {
		p.ln.Close()
		return err
	}
	p.srv = srv
	return nil
}

// close stops the page; closing one that never opened releases its
// address.
func (p *page) close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if p.srv == nil {
		if err := p.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	}
	return p.srv.Close(ctx)
}

// pageAnswer is what answered when Fetch tried a link to the task page.
type pageAnswer string

const (
	// pageWorks: the page answered the link (200).
	pageWorks pageAnswer = "works"
	// pageNobody: nothing listens at its address, or it cannot be reached.
	pageNobody pageAnswer = "nobody"
	// pageForeign: a Fetch answered that does not take the link, one
	// whose key is another (another data directory).
	pageForeign pageAnswer = "foreign"
	// pageNoTask: this Fetch's page answered that it has no such task.
	pageNoTask pageAnswer = "no task"
	// pageOther: something else answered.
	pageOther pageAnswer = "other"
)

// probeTimeout bounds one try of a link: the page answers at once.
const probeTimeout = 5 * time.Second

// probePage tries the page's link (the list's, or with id that task's) as
// a browser would, and says what answered, with the reason in a few words
// ("nothing listens there", "HTTP 401 Unauthorized"). A task's link that
// gets 404 is told apart by the list's link, which the same key signs:
// when that works, the page is this Fetch's and the task is not there.
func probePage(ctx context.Context, links *taskpage.Links, id string) (link string, ans pageAnswer, detail string) {
	link = links.List()
	if id != "" {
		link = links.Task(id)
	}
	ans, code, detail := probeOnce(ctx, link)
	if id != "" && code == http.StatusNotFound {
		if a, _, _ := probeOnce(ctx, links.List()); a == pageWorks {
			ans = pageNoTask
		}
	}
	return link, ans, detail
}

// probeOnce tries link once: what answered, its HTTP status (0 for none)
// and the reason in a few words.
func probeOnce(ctx context.Context, link string) (pageAnswer, int, string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return pageOther, 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var dns *net.DNSError
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return pageNobody, 0, "nothing listens there"
		case errors.As(err, &dns):
			return pageNobody, 0, "its host " + dns.Name + " is unknown"
		case errors.Is(err, context.DeadlineExceeded):
			return pageOther, 0, fmt.Sprintf("no answer within %s", probeTimeout)
		}
		return pageNobody, 0, err.Error()
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	status := "HTTP " + resp.Status
	switch {
	case resp.StatusCode == http.StatusOK:
		return pageWorks, resp.StatusCode, status
	case resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), taskpage.AuthScheme):
		return pageForeign, resp.StatusCode, status
	}
	return pageOther, resp.StatusCode, status
}

// runPage prints a signed link, the list's or one task's page's, once it
// works; when it does not, it says what answers at the page's address and
// what to run.
func runPage(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 1 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, args[1])
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	if cfg.PageURL == "" && cfg.PageAddr == "" {
		return &ConfigError{Problems: []string{fmt.Sprintf("the task page is off (%s=off): set %s (such as 8686) for fetch serve and fetch chat, and %s if a reverse proxy serves it", envPageAddr, envPageAddr, envPageURL)}}
	}
	base := pageBase(cfg)
	links, err := pageLinks(cfg, base)
	if err != nil {
		return err
	}
	var id string
	if len(args) == 1 {
		id = args[0]
	}
	link, ans, detail := probePage(ctx, links, id)
	where := base
	if cfg.PageURL != "" {
		where += " (" + envPageURL + ")"
	}
	const start = `"fetch serve" and "fetch chat" serve it while they run`
	switch ans {
	case pageWorks:
		fmt.Fprintln(stdout, link)
		return nil
	case pageNoTask:
		return fmt.Errorf("the task page at %s has no task %q: fetch task ls lists the tasks", where, id)
	case pageNobody:
		return fmt.Errorf("nothing serves the task page at %s (%s). %s: start one of them on this data directory (%s), then run fetch page again", where, detail, start, cfg.DataDir)
	case pageForeign:
		return fmt.Errorf("another Fetch, with another data directory, serves the task page at %s: it refused this data directory's link (%s). Stop it, or give this one another port (%s=8687, set for fetch serve, fetch chat and fetch page alike); %s", where, detail, envPageAddr, start)
	}
	return fmt.Errorf("something other than Fetch's task page answers at %s (%s). Give Fetch a free port (%s=8687, set for fetch serve, fetch chat and fetch page alike); %s", where, detail, envPageAddr, start)
}
