// Package attach takes the files that come with the owner's messages (a
// screenshot in Discord) into Fetch's data directory, checked, so that a
// task can give them to its coding CLI. Only messages the channel admitted
// (the owner and the allowlist) ever reach it; it downloads only from the
// channel's own file hosts, only types and sizes the settings allow, and a
// text file that holds what looks like a secret is refused like any other
// text Fetch stores. A message's files are taken all or none.
package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/task"
)

// Defaults of Config.
const (
	DefaultMaxBytes = 8 << 20
	DefaultTimeout  = time.Minute
	// MaxFiles bounds the files of one message.
	MaxFiles = 4
)

// DefaultTypes are the media types taken when Config.Types is empty:
// pictures and plain text (logs, code, JSON sniff as text).
var DefaultTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "application/pdf"}

// Config is what a Fetcher needs; Dir and Hosts are required.
type Config struct {
	// Dir is where the files are kept (created 0700).
	Dir string
	// Hosts are the hosts files are downloaded from (Discord's CDN);
	// https only, but for Insecure.
	Hosts []string
	// Insecure hosts may be reached over plain http (a local fake).
	Insecure []string
	// MaxBytes bounds one file (DefaultMaxBytes when 0); Types are the
	// media types taken (DefaultTypes when empty).
	MaxBytes int64
	Types    []string
	// Secret tells whether text holds what looks like a secret (the
	// redactor's rules); nil checks nothing.
	Secret func(text string) bool
	// Client downloads (a client with DefaultTimeout when nil).
	Client *http.Client
}

// Fetcher downloads and checks attachments.
type Fetcher struct{ cfg Config }

// New returns a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	if cfg.Dir == "" || len(cfg.Hosts) == 0 {
		return nil, errors.New("attach: a directory and the hosts to download from are required")
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if len(cfg.Types) == 0 {
		cfg.Types = DefaultTypes
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: DefaultTimeout}
	}
	return &Fetcher{cfg: cfg}, nil
}

// ErrRefused is wrapped by every error about a file itself (too big, a
// type not taken, a host not the channel's, a secret inside, a failed
// download): what the owner is told.
var ErrRefused = errors.New("attachment refused")

// Fetch downloads atts and returns them as Fetch keeps them; on any error
// nothing is kept.
func (f *Fetcher) Fetch(ctx context.Context, atts []chat.Attachment) ([]task.Attachment, error) {
	if len(atts) > MaxFiles {
		return nil, fmt.Errorf("%w: %d files; at most %d go with one message", ErrRefused, len(atts), MaxFiles)
	}
	if err := os.MkdirAll(f.cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("attach: %w", err)
	}
	var out []task.Attachment
	for _, a := range atts {
		t, err := f.one(ctx, a)
		if err != nil {
			for _, k := range out {
				os.Remove(k.File)
			}
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (f *Fetcher) one(ctx context.Context, a chat.Attachment) (task.Attachment, error) {
	name := CleanName(a.Name)
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrRefused, name, fmt.Sprintf(format, args...))
	}
	if a.Size > f.cfg.MaxBytes {
		return task.Attachment{}, refuse("%d bytes; the limit is %d (FETCH_ATTACH_MAX_BYTES)", a.Size, f.cfg.MaxBytes)
	}
	u, err := url.Parse(a.URL)
	if err != nil || !f.allowed(u) {
		return task.Attachment{}, refuse("not served by the chat's own file host")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return task.Attachment{}, refuse("%v", err)
	}
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		return task.Attachment{}, refuse("the download failed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return task.Attachment{}, refuse("the download failed: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return task.Attachment{}, refuse("the download failed: %v", err)
	}
	return f.keep(name, data)
}

// Local takes the owner's own file at path (fetch task run --attach),
// checked like a download.
func (f *Fetcher) Local(path string) (task.Attachment, error) {
	name := CleanName(filepath.Base(path))
	st, err := os.Stat(path)
	if err != nil {
		return task.Attachment{}, fmt.Errorf("%w: %s: %v", ErrRefused, path, err)
	}
	if !st.Mode().IsRegular() {
		return task.Attachment{}, fmt.Errorf("%w: %s: not a regular file", ErrRefused, path)
	}
	if st.Size() > f.cfg.MaxBytes {
		return task.Attachment{}, fmt.Errorf("%w: %s: %d bytes; the limit is %d (FETCH_ATTACH_MAX_BYTES)", ErrRefused, name, st.Size(), f.cfg.MaxBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return task.Attachment{}, fmt.Errorf("%w: %s: %v", ErrRefused, path, err)
	}
	if err := os.MkdirAll(f.cfg.Dir, 0o700); err != nil {
		return task.Attachment{}, fmt.Errorf("attach: %w", err)
	}
	return f.keep(name, data)
}

// keep checks data (size, type by content, secrets in text) and keeps it
// as name.
func (f *Fetcher) keep(name string, data []byte) (task.Attachment, error) {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrRefused, name, fmt.Sprintf(format, args...))
	}
	if int64(len(data)) > f.cfg.MaxBytes {
		return task.Attachment{}, refuse("more than %d bytes (FETCH_ATTACH_MAX_BYTES)", f.cfg.MaxBytes)
	}
	typ := mediaType(data)
	if !slices.Contains(f.cfg.Types, typ) {
		return task.Attachment{}, refuse("a %s file; taken are %s (FETCH_ATTACH_TYPES)", typ, strings.Join(f.cfg.Types, ", "))
	}
	if strings.HasPrefix(typ, "text/") && f.cfg.Secret != nil && f.cfg.Secret(string(data)) {
		return task.Attachment{}, refuse("it holds what looks like a secret (a key or a token); remove it and send the file again")
	}
	kept, err := os.CreateTemp(f.cfg.Dir, "*-"+name)
	if err != nil {
		return task.Attachment{}, fmt.Errorf("attach: keep %s: %w", name, err)
	}
	_, err = kept.Write(data)
	if cerr := kept.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(kept.Name())
		return task.Attachment{}, fmt.Errorf("attach: keep %s: %w", name, err)
	}
	return task.Attachment{Name: name, MediaType: typ, Size: int64(len(data)), File: kept.Name()}, nil
}

// allowed tells whether u is on one of the channel's file hosts.
func (f *Fetcher) allowed(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	switch {
	case u.User != nil:
		return false
	case u.Scheme == "https":
		return slices.Contains(f.cfg.Hosts, host) || slices.Contains(f.cfg.Insecure, host)
	case u.Scheme == "http":
		return slices.Contains(f.cfg.Insecure, host)
	}
	return false
}

// mediaType is what data is, by its content (a name or a channel's word
// is not trusted): the base media type.
func mediaType(data []byte) string {
	t, _, err := mime.ParseMediaType(http.DetectContentType(data))
	if err != nil {
		return "application/octet-stream"
	}
	return t
}

// CleanName is name as a safe base name: no directories, no leading dot
// or dash, letters, digits and ._- only, at most 80 characters.
func CleanName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-'):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".-_")
	if len(s) > 80 {
		ext := filepath.Ext(s)
		if len(ext) > 10 {
			ext = ""
		}
		s = s[:80-len(ext)] + ext
	}
	if s == "" {
		s = "file"
	}
	return s
}
