package kennel

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Defaults for Config fields left zero.
const (
	DefaultImage      = "fetch-kennel:latest"
	DefaultInstance   = "fetch"
	DefaultUser       = "10001:10001"
	DefaultMemory     = 4 << 30 // bytes
	DefaultCPUs       = 2.0
	DefaultPids       = 1024
	DefaultTmpSize    = 1 << 30 // bytes; holds the task logs
	DefaultHomeSize   = 1 << 30 // bytes
	DefaultGrace      = 2 * time.Second
	DefaultStderrTail = 16 << 10 // bytes
	DefaultMaxLine    = 1 << 20  // bytes
)

// Home is the kennel user's home directory in the image (a tmpfs at run time).
const Home = "/home/fetch"

// Config configures a Kennel. Zero fields take the defaults above.
type Config struct {
	// Image is the kennel image (built from Dockerfile.kennel).
	Image string
	// Instance names this Fetch; containers carry it as a label, so that
	// several Fetch instances (or test runs) on one engine keep apart.
	// Letters, digits, '.', '_' and '-', at most 32.
	Instance string
	// User is the numeric "uid:gid" processes run as; never root.
	User string
	// Memory is the container's memory limit in bytes (swap included).
	Memory int64
	// CPUs is the container's CPU limit, in cores.
	CPUs float64
	// Pids is the container's process limit.
	Pids int64
	// TmpSize and HomeSize are the sizes of the writable tmpfs mounts on
	// /tmp (where the task logs live) and the home directory, in bytes. They
	// count against Memory when filled.
	TmpSize  int64
	HomeSize int64
	// Grace is the time Stop gives a task from SIGINT to SIGKILL (SIGTERM at
	// half of it).
	Grace time.Duration
	// StderrTail is how many bytes of a run's stderr Result keeps.
	StderrTail int
	// MaxLine is the longest line handed to a LineHandler; longer lines are
	// split.
	MaxLine int
	// Volumes keeps each workspace in a named volume on the engine, mounted
	// at the workspace's path, instead of binding the host directory of
	// that path: for an engine on another machine, which shares no path
	// with Fetch. The volume outlives the container (RemoveVolume).
	Volumes bool
	// Egress, when set, puts the kennels on a network with no route out
	// whose only exit is the proxy (see Egress). Nil leaves them on
	// Docker's default network.
	Egress *Egress
}

var instancePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

// withDefaults returns c with zero fields set to the defaults.
func (c Config) withDefaults() Config {
	set := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.Instance == "" {
		c.Instance = DefaultInstance
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	set(&c.Memory, DefaultMemory)
	set(&c.Pids, DefaultPids)
	set(&c.TmpSize, DefaultTmpSize)
	set(&c.HomeSize, DefaultHomeSize)
	if c.CPUs == 0 {
		c.CPUs = DefaultCPUs
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.StderrTail == 0 {
		c.StderrTail = DefaultStderrTail
	}
	if c.MaxLine == 0 {
		c.MaxLine = DefaultMaxLine
	}
	return c
}

// Validate reports every problem of c (after defaults) at once.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !instancePattern.MatchString(c.Instance) {
		bad("instance %q: want 1-32 of [A-Za-z0-9_.-]", c.Instance)
	}
	if _, _, err := parseUser(c.User); err != nil {
		bad("user %q: %v", c.User, err)
	}
	if c.Memory < 64<<20 {
		bad("memory %d: at least 64 MiB", c.Memory)
	}
	if c.CPUs < 0.01 {
		bad("cpus %v: at least 0.01", c.CPUs)
	}
	if c.Pids < 16 {
		bad("pids %d: at least 16", c.Pids)
	}
	if c.TmpSize < 1<<20 || c.HomeSize < 1<<20 {
		bad("tmpfs sizes %d, %d: at least 1 MiB each", c.TmpSize, c.HomeSize)
	}
	if c.Grace < 0 {
		bad("grace %v: negative", c.Grace)
	}
	if c.StderrTail < 0 {
		bad("stderr tail %d: negative", c.StderrTail)
	}
	if c.Egress != nil && !egressID.MatchString(c.Egress.ID) {
		bad("egress id %q: want 1-16 of [a-z0-9]", c.Egress.ID)
	}
	if c.MaxLine < 64 {
		bad("max line %d: at least 64", c.MaxLine)
	}
	if len(errs) > 0 {
		return fmt.Errorf("kennel: config: %w: %w", ErrInvalid, errors.Join(errs...))
	}
	return nil
}

// parseUser parses a numeric, non-root "uid:gid".
func parseUser(s string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, errors.New(`want numeric "uid:gid"`)
	}
	if uid, err = strconv.Atoi(u); err != nil || uid < 0 {
		return 0, 0, errors.New(`want numeric "uid:gid"`)
	}
	if gid, err = strconv.Atoi(g); err != nil || gid < 0 {
		return 0, 0, errors.New(`want numeric "uid:gid"`)
	}
	if uid == 0 || gid == 0 {
		return 0, 0, errors.New("root is not allowed")
	}
	return uid, gid, nil
}
