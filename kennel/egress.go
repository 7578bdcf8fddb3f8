package kennel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/fetch-dev/fetch/kennel/egress"
	"github.com/fetch-dev/fetch/kennel/shim"
)

// Egress puts the kennels of a Kennel on a network of their own with no
// route out (an internal Docker network whose bridge has no address on the
// host, so that not even the host machine answers) and runs the kennel's
// way out beside them: a proxy container (package kennel/egress) on that
// network, under the name egress.Alias, and on Networks, which reach the
// world. Runs that ask for it (ExecSpec.Egress) get the proxy and their
// run token in their environment; every other process in a kennel reaches
// nothing.
type Egress struct {
	// ID names this Fetch's proxy and network on the engine: Fetch
	// processes that share a data directory (and so a key) share them,
	// others keep apart. [a-z0-9], at most 16.
	ID string
	// Networks are the networks the proxy joins to reach the world
	// (default "bridge", Docker's default network).
	Networks []string
	// DataDir is the data directory of the Fetch that made them, as a
	// label (LabelEgressData), to tell whose they are.
	DataDir string
}

// Labels of the proxy container and the kennels' network: LabelEgress
// holds Egress.ID, LabelEgressData Egress.DataDir.
const (
	LabelEgress     = "fetch.egress"
	LabelEgressData = "fetch.egress.data"
)

// egressLabels are the labels of the proxy and the kennels' network.
func (k *Kennel) egressLabels() map[string]string {
	return map[string]string{LabelInstance: k.cfg.Instance, LabelEgress: k.cfg.Egress.ID, LabelEgressData: k.cfg.Egress.DataDir}
}

var egressID = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// ErrEgressDown: the kennel's way out could not be started or configured;
// a run that needs it does not start.
var ErrEgressDown = errors.New("the kennel's way out is down")

// EgressRun is what ExecSpec.Egress carries: the proxy's configuration
// (pushed to the proxy when it differs from what the proxy has) and the
// run's token.
type EgressRun struct {
	Config egress.Config
	Token  string
}

// egressState is what this Kennel last pushed to its proxy.
type egressState struct {
	mu        sync.Mutex
	container string // the proxy's container ID
	started   string // its StartedAt: a restart loses the configuration
	hash      string // the configuration's hash
}

const (
	// egressConfigureAttempts bounds the wait for a proxy that was just
	// started to answer on its control socket.
	egressConfigureAttempts = 20
	egressConfigurePause    = 50 * time.Millisecond
	// egressCallTimeout bounds one exec into the proxy's container.
	egressCallTimeout = 15 * time.Second
)

// NetworkName is the kennels' network of a Kennel with egress.
func (k *Kennel) NetworkName() string {
	if k.cfg.Egress == nil {
		return ""
	}
	return "fetch-" + k.cfg.Instance + "-net-" + k.cfg.Egress.ID
}

// EgressName is the proxy container's name.
func (k *Kennel) EgressName() string {
	if k.cfg.Egress == nil {
		return ""
	}
	return "fetch-" + k.cfg.Instance + "-egress-" + k.cfg.Egress.ID
}

// ensureNetwork creates the kennels' network when it is missing.
func (k *Kennel) ensureNetwork(ctx context.Context) error {
	name := k.NetworkName()
	if _, err := k.docker.NetworkInspect(ctx, name, network.InspectOptions{}); err == nil {
		return nil
	} else if !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("kennel: network %s: %w", name, classify(err))
	}
	_, err := k.docker.NetworkCreate(ctx, name, network.CreateOptions{
		Driver:   "bridge",
		Internal: true,
		Options: map[string]string{
			// No address on the host's side of the bridge: the
			// kennels cannot reach the host machine either.
			"com.docker.network.bridge.inhibit_ipv4": "true",
		},
		Labels: k.egressLabels(),
	})
	if err != nil && !cerrdefs.IsConflict(err) {
		return fmt.Errorf("kennel: create network %s: %w", name, classify(err))
	}
	if err == nil {
		k.log.Info("kennel: network created", "network", name)
	}
	return nil
}

// egressContainer returns the running proxy's ID and start time, creating
// (or recreating) it when needed.
func (k *Kennel) egressContainer(ctx context.Context) (id, started string, err error) {
	name := k.EgressName()
	for range createAttempts {
		info, err := k.docker.ContainerInspect(ctx, name)
		if err == nil && info.State != nil && info.State.Running && info.Config != nil && info.Config.Image == k.cfg.Image {
			return info.ID, info.State.StartedAt, nil
		}
		if err == nil {
			k.log.Info("kennel: egress proxy not running or of another image; recreating it", logContainer, name, logState, stateOf(info))
			if err := k.docker.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				return "", "", fmt.Errorf("kennel: remove %s: %w", name, classify(err))
			}
		} else if !cerrdefs.IsNotFound(err) {
			return "", "", fmt.Errorf("kennel: inspect %s: %w", name, classify(err))
		}
		if err := k.createEgress(ctx, name); cerrdefs.IsConflict(err) {
			continue
		} else if err != nil {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("kennel: egress proxy %s: gave up after %d attempts", name, createAttempts)
}

// createEgress creates and starts the proxy: the kennel image running
// fetch-shim egress serve, as hardened as a kennel, on the kennels'
// network (as egress.Alias) and on the networks that reach out.
func (k *Kennel) createEgress(ctx context.Context, name string) error {
	cfg := &container.Config{
		Image:      k.cfg.Image,
		User:       k.cfg.User,
		Entrypoint: egress.ServeArgv(shim.Path),
		Labels:     k.egressLabels(),
	}
	pids := int64(256)
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(k.NetworkName()),
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": "rw,noexec,nosuid,nodev,size=16m,mode=1777"},
		Resources: container.Resources{
			Memory:     256 << 20,
			MemorySwap: 256 << 20,
			NanoCPUs:   1e9,
			PidsLimit:  &pids,
		},
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
	}
	netCfg := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		k.NetworkName(): {Aliases: []string{egress.Alias}},
	}}
	resp, err := k.docker.ContainerCreate(ctx, cfg, host, netCfg, nil, name)
	if cerrdefs.IsConflict(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("kennel: create %s: %w", name, classify(err))
	}
	fail := func(err error) error {
		rmErr := k.docker.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
		return errors.Join(err, rmErr)
	}
	for _, n := range k.egressNetworks() {
		if err := k.docker.NetworkConnect(ctx, n, resp.ID, nil); err != nil {
			return fail(fmt.Errorf("kennel: connect %s to %s: %w", name, n, classify(err)))
		}
	}
	if err := k.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return fail(fmt.Errorf("kennel: start %s: %w", name, classify(err)))
	}
	k.log.Info("kennel: egress proxy started", logContainer, name, "networks", strings.Join(k.egressNetworks(), ","))
	return nil
}

func (k *Kennel) egressNetworks() []string {
	if len(k.cfg.Egress.Networks) == 0 {
		return []string{"bridge"}
	}
	return k.cfg.Egress.Networks
}

// ensureEgress makes sure the kennels' network and the proxy exist and the
// proxy has run.Config; a proxy that cannot be made so is ErrEgressDown.
func (k *Kennel) ensureEgress(ctx context.Context, run *EgressRun) error {
	if k.cfg.Egress == nil {
		return fmt.Errorf("kennel: egress asked of a kennel without it: %w", ErrInvalid)
	}
	raw, err := json.Marshal(run.Config)
	if err != nil {
		return fmt.Errorf("kennel: egress config: %w", err)
	}
	hash := hashOf(raw)
	st := &k.egress
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := k.ensureNetwork(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrEgressDown, err)
	}
	id, started, err := k.egressContainer(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEgressDown, err)
	}
	if id == st.container && started == st.started && hash == st.hash {
		return nil
	}
	var lastErr error
	for range egressConfigureAttempts {
		var out []byte
		out, lastErr = k.egressCall(ctx, id, egress.ConfigureArgv(shim.Path), raw)
		if lastErr == nil {
			var h egress.Health
			if err := json.Unmarshal(out, &h); err != nil || !h.Configured {
				lastErr = fmt.Errorf("kennel: egress configure answered %q", bytes.TrimSpace(out))
				break
			}
			st.container, st.started, st.hash = id, started, hash
			return nil
		}
		if !errors.Is(lastErr, errEgressNotAnswering) {
			break
		}
		select { // just started: its control socket is not up yet
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrEgressDown, context.Cause(ctx))
		case <-time.After(egressConfigurePause):
		}
	}
	return fmt.Errorf("%w: configure: %w", ErrEgressDown, lastErr)
}

// EgressReport reads (and forgets) what the proxy saw of a task's runs. A
// Kennel without egress, or whose proxy is gone, reports nothing.
func (k *Kennel) EgressReport(ctx context.Context, workspace, task string) (egress.Report, error) {
	if k.cfg.Egress == nil {
		return egress.Report{}, nil
	}
	out, err := k.egressCall(ctx, k.EgressName(), egress.EventsArgv(shim.Path, task), nil)
	if errors.Is(err, errContainerGone) {
		return egress.Report{}, nil
	}
	if err != nil {
		return egress.Report{}, fmt.Errorf("kennel: egress report of %s: %w", task, err)
	}
	var r egress.Report
	if err := json.Unmarshal(out, &r); err != nil {
		return egress.Report{}, fmt.Errorf("kennel: egress report of %s: %w", task, err)
	}
	return r, nil
}

// RemoveEgress removes the proxy and the kennels' network (once no kennel
// uses it). Removing what is missing is fine.
func (k *Kennel) RemoveEgress(ctx context.Context) error {
	if k.cfg.Egress == nil {
		return nil
	}
	err := k.docker.ContainerRemove(ctx, k.EgressName(), container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("kennel: remove %s: %w", k.EgressName(), classify(err))
	}
	k.egress.mu.Lock()
	k.egress.container = ""
	k.egress.mu.Unlock()
	err = k.docker.NetworkRemove(ctx, k.NetworkName())
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("kennel: remove network %s: %w", k.NetworkName(), classify(err))
	}
	return nil
}

// egressCall runs one of the proxy's control commands in its container
// (with stdin, when not nil) and returns its stdout; a command that exits
// non-zero is an ErrShim error, ErrEgressDown when the proxy did not
// answer.
func (k *Kennel) egressCall(ctx context.Context, ctr string, argv []string, stdin []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, egressCallTimeout)
	defer cancel()
	res, err := k.controlIn(ctx, ctr, argv, stdin, egress.ExitOK)
	if err != nil && res.code == egress.ExitDown {
		return nil, fmt.Errorf("%w: %w", errEgressNotAnswering, err)
	}
	return res.stdout, err
}

// errEgressNotAnswering: the proxy's control socket is not up (yet).
var errEgressNotAnswering = errors.New("the proxy does not answer")

// EgressHealth says whether the proxy runs and has a configuration. A
// proxy that is not running is not an error: the next run makes it.
func (k *Kennel) EgressHealth(ctx context.Context) (running bool, h egress.Health, err error) {
	if k.cfg.Egress == nil {
		return false, egress.Health{}, nil
	}
	info, err := k.docker.ContainerInspect(ctx, k.EgressName())
	if cerrdefs.IsNotFound(err) {
		return false, egress.Health{}, nil
	}
	if err != nil {
		return false, egress.Health{}, fmt.Errorf("kennel: inspect %s: %w", k.EgressName(), classify(err))
	}
	if info.State == nil || !info.State.Running {
		return false, egress.Health{}, nil
	}
	out, err := k.egressCall(ctx, info.ID, egress.HealthArgv(shim.Path), nil)
	if err != nil {
		return true, egress.Health{}, fmt.Errorf("kennel: egress health: %w", err)
	}
	if err := json.Unmarshal(out, &h); err != nil {
		return true, egress.Health{}, fmt.Errorf("kennel: egress health: %w", err)
	}
	return true, h, nil
}

// CheckNetworks checks that the networks the proxy reaches out on exist.
func (k *Kennel) CheckNetworks(ctx context.Context) error {
	if k.cfg.Egress == nil {
		return nil
	}
	var errs []error
	for _, n := range k.egressNetworks() {
		if _, err := k.docker.NetworkInspect(ctx, n, network.InspectOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("network %s: %w", n, classify(err)))
		}
	}
	return errors.Join(errs...)
}
