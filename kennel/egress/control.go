package egress

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// maxConfig bounds a configuration read from the control socket or stdin.
const maxConfig = 1 << 20

// Health is what the control socket says of the proxy.
type Health struct {
	Configured bool   `json:"configured"`
	Hash       string `json:"hash,omitempty"`
}

// controlHandler serves the control socket: POST /config, GET /events,
// GET /health.
func (s *Server) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /config", func(w http.ResponseWriter, r *http.Request) {
		var c Config
		if err := json.NewDecoder(io.LimitReader(r.Body, maxConfig)).Decode(&c); err != nil {
			http.Error(w, "egress: config: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.Configure(c); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, Health{Configured: true, Hash: s.Hash()})
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		forget, _ := strconv.ParseBool(r.URL.Query().Get("forget"))
		writeJSON(w, s.events.take(r.URL.Query().Get("task"), forget))
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		h := s.Hash()
		writeJSON(w, Health{Configured: h != "", Hash: h})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Commands of Main (fetch-shim egress COMMAND).
const (
	CmdServe     = "serve"
	CmdConfigure = "configure"
	CmdEvents    = "events"
	CmdHealth    = "health"
)

// Exit codes of Main.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
	ExitDown   = 3 // the proxy does not answer on its control socket
)

// ConfigureArgv, EventsArgv and HealthArgv are the argv Fetch execs in the
// proxy's container (shimPath is fetch-shim's path there).
func ConfigureArgv(shimPath string) []string {
	return []string{shimPath, "egress", CmdConfigure}
}

// EventsArgv reads (and forgets) a task's report.
func EventsArgv(shimPath, task string) []string {
	return []string{shimPath, "egress", CmdEvents, "--task", task, "--forget"}
}

// HealthArgv asks whether the proxy is configured.
func HealthArgv(shimPath string) []string {
	return []string{shimPath, "egress", CmdHealth}
}

// ServeArgv is the proxy container's command.
func ServeArgv(shimPath string) []string {
	return []string{shimPath, "egress", CmdServe}
}

// Main runs one command; args start after "egress".
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: fetch-shim egress serve|configure|events|health")
		return ExitUsage
	}
	fs := flag.NewFlagSet("egress "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":"+strconv.Itoa(Port), "serve: the proxy's address")
	control := fs.String("control", ControlSocket, "the control socket")
	task := fs.String("task", "", "events: the task")
	forget := fs.Bool("forget", false, "events: forget what was read")
	if err := fs.Parse(args[1:]); err != nil {
		return ExitUsage
	}
	switch args[0] {
	case CmdServe:
		return serveMain(ctx, *listen, *control, stderr)
	case CmdConfigure:
		return controlCall(ctx, *control, http.MethodPost, "/config", io.LimitReader(stdin, maxConfig), stdout, stderr)
	case CmdEvents:
		q := "/events?task=" + url.QueryEscape(*task)
		if *forget {
			q += "&forget=1"
		}
		return controlCall(ctx, *control, http.MethodGet, q, nil, stdout, stderr)
	case CmdHealth:
		return controlCall(ctx, *control, http.MethodGet, "/health", nil, stdout, stderr)
	}
	fmt.Fprintf(stderr, "fetch-shim egress: unknown command %q\n", args[0])
	return ExitUsage
}

func serveMain(ctx context.Context, listen, control string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if err := os.MkdirAll(filepath.Dir(control), 0o700); err != nil {
		log.Error("egress: control socket", "err", err)
		return ExitFailed
	}
	_ = os.Remove(control)
	cl, err := net.Listen("unix", control)
	if err != nil {
		log.Error("egress: control socket", "err", err)
		return ExitFailed
	}
	pl, err := net.Listen("tcp", listen)
	if err != nil {
		cl.Close()
		log.Error("egress: listen", "err", err)
		return ExitFailed
	}
	log.Info("egress: serving", "listen", listen)
	err = NewServer(Options{Logger: log}).Serve(ctx, pl, cl)
	if !errors.Is(err, ErrClosed) {
		log.Error("egress: stopped", "err", err)
		return ExitFailed
	}
	return ExitOK
}

// controlCall makes one request on the control socket and copies the
// answer to stdout.
func controlCall(ctx context.Context, socket, method, path string, body io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, method, "http://egress"+path, body)
	if err != nil {
		fmt.Fprintln(stderr, "fetch-shim egress:", err)
		return ExitFailed
	}
	resp, err := c.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "fetch-shim egress: the proxy does not answer:", err)
		return ExitDown
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Fprintf(stderr, "fetch-shim egress: %s", msg)
		return ExitFailed
	}
	_, _ = io.Copy(stdout, resp.Body)
	return ExitOK
}
