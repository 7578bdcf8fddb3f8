package taskpage

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fetch-dev/fetch/internal/progress"
	"github.com/fetch-dev/fetch/internal/redact"
	"github.com/fetch-dev/fetch/internal/task"
)

// Tasks is what the page reads of the task engine (*task.Engine).
type Tasks interface {
	Get(ctx context.Context, id string) (task.Task, error)
	List(ctx context.Context, f task.Filter) ([]task.Task, error)
	LogAfter(ctx context.Context, id string, seq int64, fn func(task.LogEntry) error) error
	// The files the task's CLI left for the owner (outfiles.go).
	OutFiles(ctx context.Context, id string) ([]task.OutFile, error)
	OutFileData(ctx context.Context, id string, run int, name string) (task.OutFile, error)
}

// Defaults and bounds of the server.
const (
	// DefaultPoll is how often a live stream asks the store for what is
	// new: the log is written by whichever Fetch process runs the task,
	// so the store is the one place to learn of it.
	DefaultPoll = time.Second
	// maxStream bounds one live stream; the browser reconnects after it
	// (EventSource does so by itself) and carries on where it was.
	maxStream = 30 * time.Minute
	// retryMS is the reconnection delay the stream asks browsers for.
	retryMS = 3000
	// listLimit is how many tasks the list shows, newest first.
	listLimit = 200
	// readTimeout bounds reading a request's headers.
	readTimeout = 10 * time.Second
)

//go:embed assets
var assets embed.FS

// Config is what a Server needs. Tasks, Links and Redactor are required.
type Config struct {
	Tasks Tasks
	Links *Links
	// Redactor masks secrets in every text the page shows.
	Redactor *redact.Redactor
	// PatchDir holds ID.patch, a task's whole diff (the store keeps a cut
	// one when it is long); empty: the stored one only.
	PatchDir string
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil); Poll how often live streams
	// read the store (DefaultPoll when 0).
	Now  func() time.Time
	Poll time.Duration
	// Location is the owner's time zone (FETCH_TIMEZONE), in which the
	// page says times; UTC when nil.
	Location *time.Location
	// Repos is the folder of Fetch's own bare repositories (NAME.git):
	// a task's page says how to fetch its branch from there. Empty: it
	// does not.
	Repos string
}

// Server serves the task page. New builds it, Open listens, Close stops.
type Server struct {
	cfg    Config
	log    *slog.Logger
	clock  clock
	tmpl   *template.Template
	css    []byte
	static map[string]asset

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}
}

// New builds a Server; it starts nothing.
func New(cfg Config) (*Server, error) {
	if cfg.Tasks == nil || cfg.Links == nil || cfg.Redactor == nil {
		return nil, errors.New("taskpage: Tasks, Links and Redactor are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	c := clock{now: cfg.Now, loc: cfg.Location}
	tmpl, err := template.New("page").Funcs(template.FuncMap{"when": c.when}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("taskpage: templates: %w", err)
	}
	css, err := codeCSS()
	if err != nil {
		return nil, fmt.Errorf("taskpage: code colours: %w", err)
	}
	static := map[string]asset{"code.css": {"text/css; charset=utf-8", css}}
	for name, typ := range staticTypes {
		b, err := fs.ReadFile(assets, "assets/"+name)
		if err != nil {
			return nil, fmt.Errorf("taskpage: assets: %w", err)
		}
		static[name] = asset{typ, b}
	}
	return &Server{cfg: cfg, log: cfg.Logger, clock: c, tmpl: tmpl, css: css, static: static}, nil
}

// asset is a file the page serves as it is.
type asset struct {
	typ  string
	data []byte
}

// staticTypes are the embedded files served under /static/ (code.css is
// made from chroma's style): no others, no listing, no templates.
var staticTypes = map[string]string{
	"page.css":    "text/css; charset=utf-8",
	"live.js":     "text/javascript; charset=utf-8",
	"favicon.svg": "image/svg+xml",
}

// Handler is the page's routes. Its streams end when ctx (or the
// request's) is done.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tasks", s.list)
	mux.HandleFunc("GET /t/{id}", s.task)
	mux.HandleFunc("GET /t/{id}/events", s.events)
	mux.HandleFunc("GET /t/{id}/out/{run}/{name}", s.outFile)
	mux.HandleFunc("GET /static/{name}", func(w http.ResponseWriter, r *http.Request) {
		s.serveAsset(w, r.PathValue("name"))
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { s.serveAsset(w, "favicon.svg") })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { s.denied(w, ErrBadLink) })
	return secure(mux)
}

// serveAsset answers one of the page's files, 404 for any other name.
func (s *Server) serveAsset(w http.ResponseWriter, name string) {
	a, ok := s.static[name]
	if !ok {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", a.typ)
	w.Write(a.data)
}

// secure sets the headers every answer carries: nothing is cached, the
// signed link never leaves in a Referer, no script or style but the
// page's own runs, and no site frames it.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// Listen listens on addr (host:port; port 0 picks one) for Open: the
// caller learns the address, hence the links' base, before the Server is
// built.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("taskpage: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Open serves on ln until Close, which closes it.
func (s *Server) Open(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("taskpage: already open")
	}
	// Request contexts derive from this one: Close ends the live streams,
	// which Shutdown alone would wait for.
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readTimeout,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.ln, s.done = ln, make(chan struct{})
	srv, done := s.srv, s.done
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("task page server stopped", "err", err)
		}
	}()
	s.log.Info("task page listening", "addr", ln.Addr().String())
	return nil
}

// Addr is the address the server listens on, empty before Open.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close ends the live streams, stops the server and waits for it. Closing
// a server that is not open is success.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	srv, done, cancel := s.srv, s.done, s.cancel
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	cancel()
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	select {
	case <-done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("taskpage: close: %w", err)
	}
	return nil
}

// AuthScheme names the page's links in the WWW-Authenticate header of a
// 401, by which a client tells the task page of a Fetch (another one,
// whose key is another) from other programs.
const AuthScheme = "FetchLink"

// denied answers 401 with a short text.
func (s *Server) denied(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("WWW-Authenticate", AuthScheme+` realm="fetch task page"`)
	w.WriteHeader(http.StatusUnauthorized)
	if errors.Is(err, ErrExpiredLink) {
		io.WriteString(w, "This link to Fetch's task page has expired. Ask Fetch for a new one (/status on Discord).\n")
		return
	}
	io.WriteString(w, "This page needs a valid link from Fetch (it comes with a task's messages).\n")
}

// clean makes text from the world safe to show: no control sequences, no
// secrets.
func (s *Server) clean(v string) string {
	return s.cfg.Redactor.String(redact.StripControl(v))
}

// row is a task as the list shows it.
type row struct {
	ID, State, Harness, Workspace, Goal, Duration, Cost, Created, CreatedISO, Href string
}

type listView struct {
	Title, Static string
	// Refresh: a page without JavaScript reloads itself (never for the
	// list).
	Refresh     bool
	Rows        []row
	Count       int
	Now, NowISO string
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	exp, err := s.cfg.Links.check(scopeList, r.URL.Query())
	if err != nil {
		s.denied(w, err)
		return
	}
	ts, err := s.cfg.Tasks.List(r.Context(), task.Filter{Limit: listLimit})
	if err != nil {
		s.fail(w, "list tasks", err)
		return
	}
	q := s.cfg.Links.query(scopeList, exp).Encode()
	now := s.clock.now()
	v := listView{Title: "Tasks", Static: "static/", Count: len(ts), Now: now.In(s.cfg.Location).Format(dayTime + " MST"), NowISO: iso(now)}
	for _, t := range ts {
		v.Rows = append(v.Rows, row{
			ID: s.clean(t.ID), State: string(t.State), Harness: s.clean(t.Harness), Workspace: s.clean(t.Workspace),
			Goal: clip(s.clean(oneLine(t.Goal)), 120), Duration: showDuration(duration(t, now)), Cost: listCost(t),
			Created: t.CreatedAt.In(s.cfg.Location).Format(dayTime), CreatedISO: iso(t.CreatedAt),
			Href: "t/" + url.PathEscape(t.ID) + "?" + q,
		})
	}
	s.render(w, "list.html", v)
}

// taskView is one task's page.
type taskView struct {
	Title, Static                                     string
	ID, Goal, State, Harness, Workspace, Mode, Branch string
	Summary, Error, ShipError, Question, Output       string
	Duration, Cost, Created, CreatedISO               string
	Ended, EndedISO                                   string
	Failed                                            bool
	ExitCode                                          string
	BaseBranch, Base                                  string
	Commits                                           []commitView
	Take                                              string
	Merge                                             string
	PR                                                string
	Added, Removed                                    int
	Files                                             []diffFile
	Out                                               []outView
	PatchNote                                         string
	Items                                             []item
	Omitted                                           int
	Live                                              bool
	// Refresh: a running task's page reloads itself without JavaScript.
	Refresh  bool
	Events   string
	Self     string
	ListHref string
}

// commitView is a commit of the task's branch.
type commitView struct{ Hash, Subject string }

// maxCommits bounds the commits a page lists; the newest are shown.
const maxCommits = 20

func (s *Server) task(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q, err := s.cfg.Links.taskAccess(id, r.URL.Query())
	if err != nil {
		s.denied(w, err)
		return
	}
	t, err := s.cfg.Tasks.Get(r.Context(), id)
	if errors.Is(err, task.ErrNotFound) {
		http.Error(w, "No such task.", http.StatusNotFound)
		return
	}
	if err != nil {
		s.fail(w, "get task", err)
		return
	}
	summary, errText := s.clean(t.Summary), s.clean(t.Error)
	tl := s.timeline(t, summary, errText)
	var last int64
	err = s.cfg.Tasks.LogAfter(r.Context(), id, 0, func(le task.LogEntry) error {
		last = le.Seq
		tl.add(le)
		return nil
	})
	if err != nil {
		s.fail(w, "read the task's log", err)
		return
	}
	items, omitted := tl.entries()
	patch, note := s.patch(t)
	files := highlight(patch)
	now := s.clock.now()
	v := taskView{
		Static: "../static/",
		ID:     s.clean(t.ID), Goal: s.clean(t.Goal), State: string(t.State), Harness: s.clean(t.Harness),
		Workspace: s.clean(t.Workspace), Mode: string(t.Mode), Branch: s.clean(t.Branch),
		Summary: summary, Error: errText, ShipError: s.clean(t.ShipError),
		Duration: showDuration(duration(t, now)), Cost: taskCost(t, tl.spend),
		Created: s.clock.when(t.CreatedAt), CreatedISO: iso(t.CreatedAt),
		Ended: s.clock.when(t.EndedAt), EndedISO: iso(t.EndedAt),
		Failed: t.State == task.Failed, BaseBranch: s.clean(t.BaseBranch), Base: short(s.clean(t.Base)),
		Files: files, PatchNote: note,
		Items: items, Omitted: omitted,
		Live: !t.State.Terminal(), Refresh: !t.State.Terminal(),
	}
	v.Title = clip(string(t.State)+" · "+oneLine(v.Goal), 80) + " · task " + v.ID
	v.Added, v.Removed = t.Added(), t.Removed()
	if len(t.Files) == 0 {
		for _, f := range files {
			v.Added, v.Removed = v.Added+f.Added, v.Removed+f.Removed
		}
	}
	if t.State.Terminal() && t.Runs > 0 && t.ExitCode >= 0 {
		v.ExitCode = strconv.Itoa(t.ExitCode)
	}
	if t.State == task.Failed {
		v.Output = strings.TrimRight(s.clean(t.StderrTail), "\n")
	}
	cs := t.Commits
	if len(cs) > maxCommits {
		cs = cs[len(cs)-maxCommits:]
	}
	for _, c := range cs {
		v.Commits = append(v.Commits, commitView{Hash: short(s.clean(c.Hash)), Subject: clip(s.clean(oneLine(c.Subject)), 200)})
	}
	if t.Mode != task.Ask && t.Branch != "" {
		if s.cfg.Repos != "" && t.Workspace != "" {
			v.Take = "git fetch " + filepath.Join(s.cfg.Repos, s.clean(t.Workspace)+".git") + " " + v.Branch
		}
		if t.State == task.Succeeded && t.PR.State != "merged" && t.PR.State != "closed" {
			v.Merge = "Merging happens in your conversation with Fetch on Discord: the pull request's message has a Merge button, or send " +
				progress.ShipCommand + " merge " + v.ID + "."
		}
	}
	if t.State == task.WaitingInput {
		v.Question = s.clean(t.Question)
	}
	if t.PR.URL != "" && (strings.HasPrefix(t.PR.URL, "https://") || strings.HasPrefix(t.PR.URL, "http://")) {
		v.PR = s.clean(t.PR.URL)
	}
	v.Out = s.outFiles(r.Context(), t, q)
	v.Self = url.PathEscape(id) + "?" + q.Encode()
	if v.Live {
		ev := url.Values{}
		for k, vs := range q {
			ev[k] = vs
		}
		ev.Set("after", strconv.FormatInt(last, 10))
		v.Events = url.PathEscape(id) + "/events?" + ev.Encode()
	}
	if q.Get(paramSig) != "" && q.Has(paramExp) {
		if _, err := s.cfg.Links.check(scopeList, q); err == nil {
			v.ListHref = "../tasks?" + q.Encode()
		}
	}
	s.render(w, "task.html", v)
}

// timeline is the timeline of t, which does not repeat the summary and
// error the page shows above it.
func (s *Server) timeline(t task.Task, shown ...string) *timeline {
	return newTimeline(s.clean, t.Worktree, s.clock, shown...)
}

// short is a commit hash cut to 12 characters.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// patch is the task's whole diff, redacted: the patch file when there is
// one (the store keeps a cut copy of a long one), bounded by maxPatch.
func (s *Server) patch(t task.Task) (string, string) {
	p := t.Patch
	if s.cfg.PatchDir != "" && t.PatchPath != "" {
		// Only Fetch's own patch file for this task, never a path read
		// from elsewhere.
		if f, err := os.Open(filepath.Join(s.cfg.PatchDir, filepath.Base(t.ID)+".patch")); err == nil {
			b, rerr := io.ReadAll(io.LimitReader(f, maxPatch+1))
			f.Close()
			if rerr == nil {
				p = string(b)
			}
		}
	}
	note := ""
	if len(p) > maxPatch {
		n := maxPatch
		for n > 0 && !utf8.RuneStart(p[n]) { // cut between characters, never inside one
			n--
		}
		p, note = p[:n], fmt.Sprintf("The diff is longer than %d MiB; the page shows its beginning.", maxPatch>>20)
	}
	return s.clean(p), note
}

// stateMsg is what a live stream sends when the task's state, duration or
// cost changes.
type stateMsg struct {
	State    string `json:"state"`
	Duration string `json:"duration"`
	Cost     string `json:"cost"`
}

// events streams a task's new timeline entries as server-sent events:
// "item" (an entry's HTML; an entry with a data-tool attribute replaces
// the one with the same), "task" (state, duration, cost so far) and "end"
// once the task ended and its log was sent.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.cfg.Links.taskAccess(id, r.URL.Query()); err != nil {
		s.denied(w, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	t, err := s.cfg.Tasks.Get(r.Context(), id)
	if err != nil {
		if errors.Is(err, task.ErrNotFound) {
			http.Error(w, "No such task.", http.StatusNotFound)
			return
		}
		s.fail(w, "get task", err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			after = n
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	fmt.Fprintf(w, "retry: %d\n\n", retryMS)
	flusher.Flush()

	ctx, cancel := context.WithTimeout(r.Context(), maxStream)
	defer cancel()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	// The timeline reads the log from its start: what was sent before
	// (up to after) is not sent again, but its commands and spend count.
	tl := s.timeline(t)
	var seen int64
	var sent stateMsg
	for {
		var buf bytes.Buffer
		err := s.cfg.Tasks.LogAfter(ctx, id, seen, func(le task.LogEntry) error {
			seen = le.Seq
			it, ok := tl.add(le)
			if le.Seq <= after {
				return nil
			}
			after = le.Seq
			if !ok {
				fmt.Fprintf(&buf, "id: %d\n: skipped\n\n", le.Seq)
				return nil
			}
			var html bytes.Buffer
			if err := s.tmpl.ExecuteTemplate(&html, "item", it); err != nil {
				return err
			}
			writeEvent(&buf, le.Seq, "item", html.String())
			return nil
		})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("task page stream", "task", id, "err", err)
			}
			return
		}
		t, err := s.cfg.Tasks.Get(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("task page stream", "task", id, "err", err)
			}
			return
		}
		msg := stateMsg{State: string(t.State), Duration: showDuration(duration(t, s.clock.now())), Cost: taskCost(t, tl.spend)}
		if msg != sent {
			b, _ := json.Marshal(msg)
			writeEvent(&buf, 0, "task", string(b))
			sent = msg
		}
		end := t.State.Terminal()
		if end {
			writeEvent(&buf, 0, "end", t.ID)
		}
		if buf.Len() > 0 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return
			}
			flusher.Flush()
		}
		if end {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// writeEvent writes one server-sent event; data may hold newlines.
func writeEvent(w *bytes.Buffer, id int64, event, data string) {
	if id > 0 {
		fmt.Fprintf(w, "id: %d\n", id)
	}
	fmt.Fprintf(w, "event: %s\n", event)
	for line := range strings.SplitSeq(data, "\n") {
		fmt.Fprintf(w, "data: %s\n", strings.TrimSuffix(line, "\r"))
	}
	w.WriteString("\n")
}

func (s *Server) render(w http.ResponseWriter, name string, v any) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, v); err != nil {
		s.fail(w, "render "+name, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// fail logs err and answers 500 without its detail.
func (s *Server) fail(w http.ResponseWriter, op string, err error) {
	s.log.Error("task page: "+op, "err", err)
	http.Error(w, "Fetch could not read its tasks; its log says why.", http.StatusInternalServerError)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
