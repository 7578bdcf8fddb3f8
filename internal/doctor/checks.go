package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/internal/store"
	"github.com/fetch-dev/fetch/kennel"
)

// ErrUnauthorized: a service refused the credential it was given.
var ErrUnauthorized = errors.New("credential refused")

// ErrNoKeyInfo: the LLM API has no endpoint that describes a key (an
// OpenAI-compatible API other than OpenRouter).
var ErrNoKeyInfo = errors.New("no key information endpoint")

// Thresholds.
const (
	// diskFail and diskWarn are the free space below which the disk
	// check fails or warns: SQLite and the workspaces need room.
	diskFail = 256 << 20
	diskWarn = 2 << 30
	// walWarn is the write-ahead log size that says checkpoints do not
	// keep up (Fetch checkpoints every few seconds while it runs).
	walWarn = 64 << 20
)

// Engine is a Docker engine as the checks see it.
type Engine interface {
	ServerVersion(ctx context.Context) (types.Version, error)
	ClientVersion() string
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
}

// EngineCheck asks the engine named name for its version; load, when not
// nil, says how loaded it is (as /status does).
func EngineCheck(ctx context.Context, name string, e Engine, load func(context.Context) (string, error)) Check {
	c := Check{Name: "engine " + name}
	v, err := e.ServerVersion(ctx)
	if err != nil {
		return EngineUnreachable(name, err)
	}
	c.Status, c.Detail = OK, fmt.Sprintf("Docker %s, API %s (the engine offers up to %s)", v.Version, e.ClientVersion(), v.APIVersion)
	if load != nil {
		l, err := load(ctx)
		if err != nil {
			c.Status, c.Detail = Warn, c.Detail+"; its load could not be read: "+err.Error()
			c.Fix = "check the engine's health (docker info on it)"
		} else {
			c.Detail += "; " + l
		}
	}
	return c
}

// EngineUnreachable is the check of an engine that could not be reached.
func EngineUnreachable(name string, err error) Check {
	fix := "start the Docker engine (sudo systemctl start docker) or set DOCKER_HOST to where it listens"
	if name != kennel.LocalEngine {
		fix = "make engine " + name + " reachable (see its entry in FETCH_ENGINES), or remove it from FETCH_ENGINES"
	}
	return Check{Name: "engine " + name, Status: Fail, Detail: "unreachable: " + err.Error(), Fix: fix}
}

// ImageCheck looks for the kennel image on the engine. Its fix builds the
// image with programs, the CLIs tasks need (FETCH_HARNESS's; claude when
// none is given).
func ImageCheck(ctx context.Context, e Engine, ref string, programs ...string) Check {
	c := Check{Name: "image"}
	img, err := e.ImageInspect(ctx, ref)
	switch {
	case cerrdefs.IsNotFound(err):
		c.Status, c.Detail, c.Fix = Fail, ref+" is not on the engine", BuildFix(ref, programs...)+" (or set FETCH_KENNEL_IMAGE to an image you have)"
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "cannot inspect "+ref+": "+err.Error(), "check the Docker engine (docker image inspect "+ref+")"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%s (%s, %.0f MB)", ref, shortID(img.ID), float64(img.Size)/1e6)
	}
	return c
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

// Hardening is what the kennel's containers must look like from inside.
type Hardening struct {
	UID, GID     int
	Memory, Pids int64
}

// HardeningCheck compares what the probe saw with what Fetch asks for.
func HardeningCheck(r kennel.ProbeResult, want Hardening) Check {
	c := Check{Name: "kennel hardening"}
	var bad []string
	if r.UID == 0 || r.UID != want.UID || r.GID != want.GID {
		bad = append(bad, fmt.Sprintf("runs as %d:%d, not %d:%d", r.UID, r.GID, want.UID, want.GID))
	}
	if r.CapEff != 0 {
		bad = append(bad, fmt.Sprintf("has capabilities %#x", r.CapEff))
	}
	if !r.NoNewPrivs {
		bad = append(bad, "may gain privileges (no-new-privileges is off)")
	}
	if !r.ReadOnlyRoot {
		bad = append(bad, "the root filesystem is writable")
	}
	if r.DockerSocket != "" {
		bad = append(bad, "a Docker socket is reachable at "+r.DockerSocket)
	}
	limits := true
	if r.Memory != want.Memory {
		bad, limits = append(bad, fmt.Sprintf("memory limit %s, not %s", bytesText(r.Memory), bytesText(want.Memory))), false
	}
	if r.Pids != want.Pids {
		bad, limits = append(bad, fmt.Sprintf("pids limit %d, not %d", r.Pids, want.Pids)), false
	}
	if len(bad) > 0 {
		c.Status, c.Detail = Fail, "a kennel container "+strings.Join(bad, "; ")
		c.Fix = "use a Docker Engine (20.10 or later) with the default runc runtime and no daemon-wide overrides"
		if !limits && len(bad) == 1 {
			c.Fix = "let the engine apply resource limits (rootless Docker needs cgroup v2 with the cpu, memory and pids controllers delegated)"
		}
		return c
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("uid %d, no capabilities, no-new-privileges, read-only root, no Docker socket, memory %s, pids %d", r.UID, bytesText(r.Memory), r.Pids)
	return c
}

func bytesText(n int64) string {
	switch {
	case n < 0:
		return "unlimited"
	case n == 0:
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// Harness is a coding CLI as the checks see it.
type Harness struct {
	Name string
	// Program is the command the harness runs in the kennel.
	Program string
	// Default: FETCH_HARNESS, what tasks use unless told otherwise.
	Default bool
	// Keys are the secret variables the harness may take; Set those of
	// them that are set.
	Keys, Set []string
	// OneShot: the CLI has no two-way mode (harness.Traits.TwoWay is
	// false: Aider, Cursor), so its runs bypass its permissions.
	OneShot bool
}

// CLIChecks say, from the probe, which harnesses' CLIs the image holds.
// The default harness's CLI must be there; the others are listed when
// they are.
func CLIChecks(r kennel.ProbeResult, img string, hs []Harness) []Check {
	found := map[string]kennel.Program{}
	for _, p := range r.Programs {
		found[p.Name] = p
	}
	var out []Check
	for _, h := range hs {
		p := found[h.Program]
		c := Check{Name: "cli " + h.Name}
		switch {
		case p.Path != "":
			c.Status, c.Detail = OK, fmt.Sprintf("%s at %s: %s", h.Program, p.Path, or(p.Version, "no --version output"))
		case h.Default:
			c.Status = Fail
			c.Detail = fmt.Sprintf("%s (FETCH_HARNESS) is not in the image %s", h.Program, img)
			c.Fix = BuildFix(img, append(installed(r, hs), h.Program)...) + " (or set FETCH_HARNESS to a CLI the image has)"
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

// Defaults are the programs of the default harnesses, the CLIs the
// image must hold.
func Defaults(hs []Harness) []string {
	var out []string
	for _, h := range hs {
		if h.Default {
			out = append(out, h.Program)
		}
	}
	return out
}

// BypassChecks warn, for each harness without a two-way mode that is the
// default or installed (installed as for KeyChecks), that its runs bypass
// its permissions: the owner's policy and approvals do not reach it, and
// the kennel is the only boundary. A warning, not a failure.
func BypassChecks(hs []Harness, installed map[string]bool) []Check {
	var out []Check
	for _, h := range hs {
		if !h.OneShot || (!h.Default && !installed[h.Program]) {
			continue
		}
		out = append(out, Check{Name: "permissions " + h.Name, Status: Warn,
			Detail: h.Name + " has no two-way mode: its runs bypass its permissions, and the kennel is the boundary"})
	}
	return out
}

// installed are the programs of hs the probe found, so a rebuild that
// adds one keeps them.
func installed(r kennel.ProbeResult, hs []Harness) []string {
	found := map[string]bool{}
	for _, p := range r.Programs {
		found[p.Name] = p.Path != ""
	}
	var out []string
	for _, h := range hs {
		if found[h.Program] && !slices.Contains(out, h.Program) {
			out = append(out, h.Program)
		}
	}
	return out
}

// cursorAgent is Cursor's CLI, which has no package scripts/build-images.sh
// installs: it takes the executable the owner downloaded.
const cursorAgent = "cursor-agent"

// BuildFix is the command that builds the kennel image img with the
// programs in it, as scripts/build-images.sh takes them; FILE stands for
// the executable of a CLI that has no package.
func BuildFix(img string, programs ...string) string {
	clis := make([]string, 0, len(programs))
	file := false
	for _, p := range programs {
		if p == cursorAgent {
			p, file = p+"=FILE", true
		}
		clis = append(clis, p)
	}
	cmd := kennel.BuildCommand(img, clis...)
	if file {
		cmd += ", FILE being the cursor-agent executable (its installer: curl https://cursor.com/install -fsS | bash)"
	}
	return cmd
}

// KeyChecks say which harnesses have a key. The default harness must;
// with installed (the programs the image holds; nil when unknown) the
// others found there are checked too.
func KeyChecks(hs []Harness, installed map[string]bool) []Check {
	var out []Check
	for _, h := range hs {
		if !h.Default && !installed[h.Program] {
			continue
		}
		c := Check{Name: "key " + h.Name}
		switch {
		case len(h.Keys) == 0:
			c.Status, c.Detail = OK, "needs no key"
		case len(h.Set) > 0:
			c.Status, c.Detail = OK, strings.Join(h.Set, ", ")+" set"
		default:
			c.Status = Warn
			if h.Default {
				c.Status = Fail
			}
			c.Detail = "none of " + strings.Join(h.Keys, ", ") + " is set"
			c.Fix = "set " + h.Keys[0] + " in Fetch's environment"
		}
		out = append(out, c)
	}
	return out
}

// DataDirCheck makes sure Fetch can create and write files in dir (it
// makes the directory as Fetch does at start).
func DataDirCheck(dir string) Check {
	c := Check{Name: "data dir"}
	fix := fmt.Sprintf("make %s writable by uid %d, or set FETCH_DATA_DIR to a writable directory", dir, os.Geteuid())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.Status, c.Detail, c.Fix = Fail, "cannot be made: "+errText(err), fix
		return c
	}
	f, err := os.CreateTemp(dir, ".fetch-doctor-*")
	if err == nil {
		_, err = f.WriteString("probe")
		err = errors.Join(err, f.Close(), os.Remove(f.Name()))
	}
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, "Fetch cannot write in it: "+errText(err), fix
		return c
	}
	c.Status, c.Detail = OK, dir+" is writable"
	return c
}

// errText names read-only file systems and denied permissions plainly.
func errText(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "read-only file system (" + err.Error() + ")"
	case errors.Is(err, os.ErrPermission):
		return "permission denied (" + err.Error() + ")"
	}
	return err.Error()
}

// DiskCheck reports the free space where dir is.
func DiskCheck(dir string) Check {
	c := Check{Name: "disk"}
	p := dir
	for {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		p = filepath.Dir(p)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		c.Status, c.Detail, c.Fix = Warn, "free space unknown: "+err.Error(), "check "+p
		return c
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	c.Detail = fmt.Sprintf("%.1f GiB free on %s's file system", float64(free)/(1<<30), p)
	switch {
	case free < diskFail:
		c.Status, c.Fix = Fail, "free space on that file system (Fetch needs at least 256 MiB, better 2 GiB)"
	case free < diskWarn:
		c.Status, c.Fix = Warn, "free space on that file system (2 GiB or more)"
	default:
		c.Status = OK
	}
	return c
}

// DatabaseCheck runs SQLite's integrity check on the database, read-only,
// and reports the size of its write-ahead log.
func DatabaseCheck(ctx context.Context, path string) Check {
	c := Check{Name: "database"}
	h, err := store.Check(ctx, path)
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "cannot read "+path+": "+errText(err), "make "+path+" readable by this user, or restore it from a backup"
	case !h.Exists:
		c.Status, c.Detail = OK, "no "+filepath.Base(path)+" yet: Fetch makes it at its first start"
	case h.Integrity != "ok":
		c.Status, c.Detail, c.Fix = Fail, "integrity_check: "+h.Integrity, "stop Fetch and restore "+path+" from a backup"
	case h.WALSize > walWarn:
		c.Status = Warn
		c.Detail = fmt.Sprintf("integrity ok; the write-ahead log is %.0f MB", float64(h.WALSize)/1e6)
		c.Fix = "start Fetch (it checkpoints the log), or with Fetch stopped: sqlite3 " + path + " 'PRAGMA wal_checkpoint(TRUNCATE)'"
	default:
		c.Status = OK
		c.Detail = fmt.Sprintf("integrity ok, %.1f MB, write-ahead log %.1f MB", float64(h.Size)/1e6, float64(h.WALSize)/1e6)
	}
	return c
}

// Identity is who a bot is.
type Identity struct{ ID, Name string }

// Discord is the chat service's REST side.
type Discord interface {
	// Whoami returns the bot's identity; a refused token wraps
	// ErrUnauthorized.
	Whoami(ctx context.Context) (Identity, error)
}

// DiscordCheck asks Discord who the bot is ("" token: not configured).
func DiscordCheck(ctx context.Context, token string, d Discord, url string) Check {
	c := Check{Name: "discord"}
	fix := "set FETCH_DISCORD_TOKEN to the bot's token (Discord Developer Portal, your application, Bot, Reset Token)"
	if token == "" {
		c.Status, c.Detail, c.Fix = Warn, "FETCH_DISCORD_TOKEN is not set: fetch serve needs it (fetch chat does not)", fix
		return c
	}
	me, err := d.Whoami(ctx)
	switch {
	case errors.Is(err, ErrUnauthorized):
		c.Status, c.Detail, c.Fix = Fail, "Discord refused FETCH_DISCORD_TOKEN (401 Unauthorized)", fix
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "cannot reach Discord at "+url+": "+err.Error(), "check the network, or FETCH_DISCORD_URL"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("bot %s (id %s) at %s", me.Name, me.ID, url)
	}
	return c
}

// KeyInfo is what the LLM API says of a key.
type KeyInfo struct {
	Label        string
	Usage, Limit float64 // dollars; Limit 0: none
}

// LLMKey is the LLM API's key information.
type LLMKey interface {
	// KeyInfo describes the configured key; a refused key wraps
	// ErrUnauthorized, an API without key information ErrNoKeyInfo.
	KeyInfo(ctx context.Context) (KeyInfo, error)
}

// LLMCheck asks the LLM API about the key, never for a completion.
func LLMCheck(ctx context.Context, key string, l LLMKey, url string) Check {
	c := Check{Name: "openrouter"}
	fix := "set OPENROUTER_API_KEY to a valid key (https://openrouter.ai/settings/keys)"
	if key == "" {
		c.Status, c.Detail, c.Fix = Warn, "OPENROUTER_API_KEY is not set: requests in plain words get no answer (commands such as /status work)", fix
		return c
	}
	info, err := l.KeyInfo(ctx)
	switch {
	case errors.Is(err, ErrUnauthorized):
		c.Status, c.Detail, c.Fix = Fail, "the LLM API at "+url+" refused OPENROUTER_API_KEY (401 Unauthorized)", fix
	case errors.Is(err, ErrNoKeyInfo):
		c.Status, c.Detail, c.Fix = Warn, "the LLM API at "+url+" does not describe keys; the key was not checked", "none needed if the API is not OpenRouter; the first request will tell"
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "cannot reach the LLM API at "+url+": "+err.Error(), "check the network, or FETCH_LLM_URL"
	default:
		c.Status = OK
		c.Detail = fmt.Sprintf("key %s valid, $%.2f used", or(info.Label, "(no label)"), info.Usage)
		if info.Limit > 0 {
			c.Detail += fmt.Sprintf(" of $%.2f", info.Limit)
		}
	}
	return c
}

// TimezoneCheck reports the owner's time zone; set tells whether
// FETCH_TIMEZONE chose it.
func TimezoneCheck(loc *time.Location, set bool, now time.Time) Check {
	c := Check{Name: "timezone", Status: OK}
	t := now.In(loc)
	zone, _ := t.Zone()
	if set {
		c.Detail = fmt.Sprintf("%s (now %s %s)", loc, t.Format("15:04"), zone)
		return c
	}
	c.Detail = fmt.Sprintf("the system's, %s (now %s %s); FETCH_TIMEZONE is not set", zone, t.Format("15:04"), zone)
	if _, off := t.Zone(); off == 0 {
		c.Status, c.Fix = Warn, "set FETCH_TIMEZONE to your zone, e.g. Europe/Berlin (/remind and /schedule use it)"
	}
	return c
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
