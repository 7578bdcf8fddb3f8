package kennel

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Docker is the part of the Docker Engine API the kennel uses; *client.Client
// (from NewDockerClient) implements it.
type Docker interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ContainerInspect(ctx context.Context, container string) (container.InspectResponse, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, container string, options container.StartOptions) error
	ContainerRemove(ctx context.Context, container string, options container.RemoveOptions) error
	ContainerExecCreate(ctx context.Context, container string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, options container.ExecAttachOptions) (types.HijackedResponse, error)
	ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error)
	ContainerWait(ctx context.Context, container string, condition container.WaitCondition) (<-chan container.WaitResponse, <-chan error)
	VolumeCreate(ctx context.Context, options volume.CreateOptions) (volume.Volume, error)
	VolumeRemove(ctx context.Context, volumeID string, force bool) error
	NetworkInspect(ctx context.Context, network string, options network.InspectOptions) (network.Inspect, error)
	NetworkCreate(ctx context.Context, name string, options network.CreateOptions) (network.CreateResponse, error)
	NetworkConnect(ctx context.Context, network, container string, config *network.EndpointSettings) error
	NetworkRemove(ctx context.Context, network string) error
}

// NewDockerClient connects to the engine at host ("" for the default socket)
// with API version negotiation, so that older engines (20.10 speaks 1.41) work.
func NewDockerClient(host string) (*client.Client, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	c, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("kennel: docker client: %w", err)
	}
	return c, nil
}

// Kennel runs processes in one sandbox container per workspace. It is safe for
// concurrent use; it starts no goroutine of its own outside the calls that
// block (Exec and Follow own one while they stream).
type Kennel struct {
	docker Docker
	cfg    Config
	log    *slog.Logger

	createMu sync.Mutex // held while finding or creating a container

	mu         sync.Mutex
	containers map[string]knownContainer // workspace → its container, last seen running
	runs       map[runKey]*liveRun
	kept       map[string]string    // workspace → ID of a container kept busy with an old configuration, logged once
	used       map[string]time.Time // workspace → when a run of this Kennel last started or ended there (Sleep)
	quiet      map[string]time.Time // container ID → since when Sleep has seen it without a running exec

	egress egressState // what was last pushed to the proxy (Config.Egress)
}

// knownContainer is a workspace's container as last seen running, with the
// fingerprint of the settings it was created with (LabelConfig).
type knownContainer struct{ id, fingerprint string }

// runKey names a run in progress started by this Kennel.
type runKey struct{ workspace, task string }

// liveRun is a run in progress; Stop marks it so that its Result says Stopped.
type liveRun struct {
	stopped atomic.Bool
	ctr     string // the container the run uses once claimed; guarded by Kennel.mu
}

// Log keys, declared once.
const (
	logWorkspace = "workspace"
	logTask      = "task"
	logContainer = "container"
	logState     = "state"
	logTasks     = "tasks"
	logExit      = "exit"
	logStopped   = "stopped"
	logTimedOut  = "timed_out"
	logTimeout   = "timeout"
	logErr       = "err"
	logOldImage  = "old_image"
	logNewImage  = "new_image"
	logChanged   = "changed"
	logBusy      = "busy"
	logIdle      = "idle"
)

// New returns a Kennel using docker. It checks the configuration but does not
// touch the engine: containers are created on demand.
func New(docker Docker, cfg Config, logger *slog.Logger) (*Kennel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Kennel{
		docker:     docker,
		cfg:        cfg.withDefaults(),
		log:        logger,
		containers: make(map[string]knownContainer),
		runs:       make(map[runKey]*liveRun),
		kept:       make(map[string]string),
		used:       make(map[string]time.Time),
		quiet:      make(map[string]time.Time),
	}, nil
}

// Config returns the configuration in effect, defaults filled in.
func (k *Kennel) Config() Config { return k.cfg }

// startRun registers a run; a second run with the same task id in the same
// workspace is refused while the first goes on. Its start and its end are
// uses of the workspace's kennel (Sleep).
func (k *Kennel) startRun(workspace, task string) (*liveRun, func(), error) {
	key := runKey{workspace, task}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, busy := k.runs[key]; busy {
		return nil, nil, fmt.Errorf("task %s: %w", task, ErrTaskRunning)
	}
	r := &liveRun{}
	k.runs[key] = r
	k.used[workspace] = time.Now()
	return r, func() {
		k.mu.Lock()
		delete(k.runs, key)
		k.used[workspace] = time.Now()
		k.mu.Unlock()
	}, nil
}

// markStopped flags a run of this Kennel as stopped, if there is one.
func (k *Kennel) markStopped(workspace, task string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r, ok := k.runs[runKey{workspace, task}]; ok {
		r.stopped.Store(true)
	}
}
