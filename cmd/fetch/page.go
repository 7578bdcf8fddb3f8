package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
which opens every task it lists), or with TASK, that task's page only. The
page is served by "fetch serve" when FETCH_PAGE_ADDR is set; links are valid
for FETCH_PAGE_TTL (default 168h) and point at FETCH_PAGE_URL (default
http://FETCH_PAGE_ADDR). The key that signs them is $FETCH_DATA_DIR/page.key:
remove it to revoke every link given so far.
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

// listenPage listens on FETCH_PAGE_ADDR; nil when the page is off, or
// when the default address is taken (logged: the owner did not ask for
// that port, and Fetch works without its page).
func listenPage(ctx context.Context, cfg Config, log *slog.Logger) (*page, error) {
	if cfg.PageAddr == "" {
		return nil, nil
	}
	ln, err := taskpage.Listen(ctx, cfg.PageAddr)
	if err != nil && cfg.PageDefault {
		log.Warn("the task page is off: its default address is taken; set "+envPageAddr+" to another port", "addr", cfg.PageAddr, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w (set %s to another address, or off)", err, envPageAddr)
	}
	links, err := pageLinks(cfg, "http://"+ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &page{ln: ln, links: links}, nil
}

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

// runPage prints a signed link: the list, or one task's page.
func runPage(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 1 {
		return fmt.Errorf("unexpected argument %q: %w", args[1], errUsage)
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base := cfg.PageURL
	if base == "" {
		if cfg.PageAddr == "" {
			return &ConfigError{Problems: []string{fmt.Sprintf("the task page is off: set %s (such as 8686) for fetch serve, and %s if a reverse proxy serves it", envPageAddr, envPageURL)}}
		}
		base = "http://" + cfg.PageAddr
	}
	links, err := pageLinks(cfg, base)
	if err != nil {
		return err
	}
	if len(args) == 1 {
		fmt.Fprintln(stdout, links.Task(args[0]))
		return nil
	}
	fmt.Fprintln(stdout, links.List())
	return nil
}
