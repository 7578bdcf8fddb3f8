package kennel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"

	"github.com/fetch-dev/fetch/kennel/shim"
)

// Labels on the kennel's containers.
const (
	// LabelInstance holds Config.Instance: which Fetch owns the container.
	LabelInstance = "fetch.instance"
	// LabelWorkspace holds the workspace's absolute path.
	LabelWorkspace = "fetch.workspace"
	// LabelConfig holds the fingerprint of the settings the container was
	// created with (a hash of LabelSettings, which covers the image and the
	// ID it resolved to, the user, the limits and the whole container
	// definition): a container whose fingerprint is not the configuration's
	// is recreated once nothing runs in it.
	LabelConfig = "fetch.config"
	// LabelSettings holds those settings as JSON, to log which changed.
	LabelSettings = "fetch.settings"
)

// createAttempts bounds the inspect/create loop when containers vanish or
// concurrent calls race to create the same one.
const createAttempts = 3

// BuildCommand is how to build the kennel image (DefaultImage when image
// is empty) with the coding CLIs clis from a checkout of Fetch: the same
// command the README gives.
func BuildCommand(image string, clis ...string) string {
	cmd := "scripts/build-images.sh --kennel-only"
	if len(clis) > 0 {
		cmd += " --cli " + strings.Join(clis, ",")
	} else {
		cmd += " --cli claude"
	}
	if image != "" && image != DefaultImage {
		cmd += " --kennel-image " + image
	}
	return cmd
}

// EnsureImage checks that the kennel image exists and returns its ID. A missing
// image is ErrImageMissing, with the command that builds it.
func (k *Kennel) EnsureImage(ctx context.Context) (string, error) {
	img, err := k.docker.ImageInspect(ctx, k.cfg.Image)
	if cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("kennel: image %s: %w; build it with: %s", k.cfg.Image, ErrImageMissing, BuildCommand(k.cfg.Image))
	}
	if err != nil {
		return "", fmt.Errorf("kennel: image %s: %w", k.cfg.Image, classify(err))
	}
	return img.ID, nil
}

// containerName is the name of a workspace's container: the instance and a
// hash of the path (paths are too long and too free-form for names).
func (k *Kennel) containerName(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return "fetch-" + k.cfg.Instance + "-" + hex.EncodeToString(sum[:6])
}

// container returns the ID of the workspace's running container, creating it
// when it does not exist, recreating it when it stopped or died, and when the
// configuration changed since it was created (LabelConfig) and nothing holds
// it (see retire). The image is inspected every time, so that a rebuilt tag
// counts as a change. A running container whose image is missing is used as
// it is.
func (k *Kennel) container(ctx context.Context, workspace string) (string, error) {
	want, wantErr := k.wanted(ctx, workspace)
	if wantErr != nil && !errors.Is(wantErr, ErrImageMissing) {
		return "", wantErr
	}
	current := func() (string, bool) {
		k.mu.Lock()
		defer k.mu.Unlock()
		c, ok := k.containers[workspace]
		return c.id, ok && (wantErr != nil || c.fingerprint == want.fingerprint)
	}
	if id, ok := current(); ok {
		return id, nil
	}
	// One creator at a time: a container another call is creating would
	// look dead (created, not yet running) to this one, and one that call
	// just decided to keep must not be retired by this one.
	k.createMu.Lock()
	defer k.createMu.Unlock()
	if id, ok := current(); ok {
		return id, nil
	}
	name := k.containerName(workspace)
	log := k.log.With(logWorkspace, workspace, logContainer, name)
	for range createAttempts {
		info, err := k.docker.ContainerInspect(ctx, name)
		switch {
		case cerrdefs.IsNotFound(err):
			if wantErr != nil {
				return "", wantErr
			}
			id, err := k.create(ctx, name, want)
			if cerrdefs.IsConflict(err) {
				continue // created meanwhile by another Fetch
			}
			if err != nil {
				return "", err
			}
			log.Info("kennel: container created")
			k.remember(workspace, id, want.fingerprint)
			return id, nil
		case err != nil:
			return "", fmt.Errorf("kennel: inspect %s: %w", name, classify(err))
		}
		if err := k.owns(info, workspace); err != nil {
			return "", err
		}
		if info.State != nil && info.State.Running && !info.State.Paused && !info.State.Restarting {
			fingerprint := info.Config.Labels[LabelConfig]
			switch {
			case wantErr != nil:
				log.Warn("kennel: the configured image is missing; using the existing container", logErr, wantErr)
			case fingerprint != want.fingerprint:
				retired, err := k.retire(ctx, log, workspace, info, want)
				if err != nil {
					return "", err
				}
				if retired {
					continue
				}
			}
			k.remember(workspace, info.ID, fingerprint)
			return info.ID, nil
		}
		log.Info("kennel: container not running; recreating it", logState, stateOf(info))
		err = k.docker.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			return "", fmt.Errorf("kennel: remove %s: %w", name, classify(err))
		}
	}
	return "", fmt.Errorf("kennel: container %s: gave up after %d attempts", name, createAttempts)
}

// lookup returns the ID of the workspace's container if it is running, ""
// otherwise. It never creates one.
func (k *Kennel) lookup(ctx context.Context, workspace string) (string, error) {
	k.mu.Lock()
	c, ok := k.containers[workspace]
	k.mu.Unlock()
	if ok {
		return c.id, nil
	}
	info, err := k.docker.ContainerInspect(ctx, k.containerName(workspace))
	if cerrdefs.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("kennel: inspect: %w", classify(err))
	}
	if err := k.owns(info, workspace); err != nil {
		return "", err
	}
	if info.State == nil || !info.State.Running {
		return "", nil
	}
	k.remember(workspace, info.ID, info.Config.Labels[LabelConfig])
	return info.ID, nil
}

func (k *Kennel) remember(workspace, id, fingerprint string) {
	k.mu.Lock()
	k.containers[workspace] = knownContainer{id: id, fingerprint: fingerprint}
	k.mu.Unlock()
}

// forget drops a container ID that turned out stale (the container died).
func (k *Kennel) forget(workspace, id string) {
	k.mu.Lock()
	if k.containers[workspace].id == id {
		delete(k.containers, workspace)
	}
	k.mu.Unlock()
}

// owns checks that a container found by name is this instance's container for
// this workspace, not a stranger that happens to have the name.
func (k *Kennel) owns(info container.InspectResponse, workspace string) error {
	var labels map[string]string
	if info.Config != nil {
		labels = info.Config.Labels
	}
	if labels[LabelInstance] != k.cfg.Instance || labels[LabelWorkspace] != workspace {
		return fmt.Errorf("kennel: container %s belongs to instance %q, workspace %q: %w",
			strings.TrimPrefix(info.Name, "/"), labels[LabelInstance], labels[LabelWorkspace], ErrInvalid)
	}
	return nil
}

func stateOf(info container.InspectResponse) string {
	if info.State == nil {
		return "unknown"
	}
	return string(info.State.Status)
}

// create creates and starts the workspace's container.
func (k *Kennel) create(ctx context.Context, name string, w wantedContainer) (string, error) {
	if k.cfg.Volumes {
		if err := k.prepareVolume(ctx, w.config.Labels[LabelWorkspace]); err != nil {
			return "", err
		}
	}
	if k.cfg.Egress != nil {
		if err := k.ensureNetwork(ctx); err != nil {
			return "", err
		}
	}
	resp, err := k.docker.ContainerCreate(ctx, w.config, w.host, &network.NetworkingConfig{}, nil, name)
	if cerrdefs.IsConflict(err) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("kennel: create %s: %w", name, classify(err))
	}
	if err := k.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		rmErr := k.docker.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
		return "", fmt.Errorf("kennel: start %s: %w", name, errors.Join(classify(err), rmErr))
	}
	return resp.ID, nil
}

// containerConfig is the hardened container for a workspace: the kennel user,
// no capabilities, no privilege gain, read-only root with tmpfs /tmp and home,
// resource limits, the workspace at its own path, and no environment beyond
// the image's PATH and HOME. Nothing else from the host is mounted (in
// particular not the Docker socket). The labels are only those that name the
// container; wanted adds the configuration's.
func (k *Kennel) containerConfig(workspace string) (*container.Config, *container.HostConfig) {
	uid, gid, _ := parseUser(k.cfg.User) // checked by Validate
	pids := k.cfg.Pids
	cfg := &container.Config{
		Image:      k.cfg.Image,
		User:       k.cfg.User,
		WorkingDir: workspace,
		Labels: map[string]string{
			LabelInstance:  k.cfg.Instance,
			LabelWorkspace: workspace,
		},
	}
	host := &container.HostConfig{
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		Tmpfs: map[string]string{
			"/tmp": fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,mode=1777", k.cfg.TmpSize),
			Home:   fmt.Sprintf("rw,exec,nosuid,nodev,size=%d,uid=%d,gid=%d,mode=0700", k.cfg.HomeSize, uid, gid),
		},
		Mounts: []mount.Mount{k.workspaceMount(workspace)},
		Resources: container.Resources{
			Memory:     k.cfg.Memory,
			MemorySwap: k.cfg.Memory, // no swap beyond the limit
			NanoCPUs:   int64(k.cfg.CPUs * 1e9),
			PidsLimit:  &pids,
		},
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
	}
	if k.cfg.Egress != nil {
		// The kennels' own network, with no route out: the proxy is
		// the only way out (egress.go).
		host.NetworkMode = container.NetworkMode(k.NetworkName())
		// Names outside are never resolved there (the proxy resolves
		// what it lets through): a lookup gives up after a second per
		// query instead of the resolver's default 5 s, twice each.
		host.DNSOptions = []string{"timeout:1", "attempts:1"}
	}
	return cfg, host
}

// Remove removes the workspace's container and everything running in it.
// Removing a missing container is fine.
func (k *Kennel) Remove(ctx context.Context, workspace string) error {
	if err := checkWorkspace(workspace); err != nil {
		return fmt.Errorf("kennel: remove: %w", err)
	}
	name := k.containerName(workspace)
	k.mu.Lock()
	delete(k.containers, workspace)
	delete(k.kept, workspace)
	k.mu.Unlock()
	err := k.docker.ContainerRemove(ctx, name, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("kennel: remove %s: %w", name, classify(err))
	}
	return nil
}

// instanceFilter selects this instance's containers.
func (k *Kennel) instanceFilter() filters.Args {
	return filters.NewArgs(filters.Arg("label", LabelInstance+"="+k.cfg.Instance))
}

// checkWorkspace accepts an absolute, clean path that does not shadow a
// directory the container needs: it may not be one of the top-level system
// directories, nor lie inside the ones the container runs from.
func checkWorkspace(ws string) error {
	if ws == "" || !path.IsAbs(ws) || path.Clean(ws) != ws {
		return fmt.Errorf("workspace %q: want an absolute, clean path: %w", ws, ErrInvalid)
	}
	reservedExact := []string{"/", "/home", "/tmp", "/var", "/opt", "/srv", "/mnt", "/media", "/root", "/boot"}
	reservedTrees := []string{"/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", Home, shim.StateDir}
	for _, r := range reservedExact {
		if ws == r {
			return fmt.Errorf("workspace %q: a system directory: %w", ws, ErrInvalid)
		}
	}
	for _, r := range reservedTrees {
		if ws == r || strings.HasPrefix(ws, r+"/") {
			return fmt.Errorf("workspace %q: inside %s: %w", ws, r, ErrInvalid)
		}
	}
	return nil
}
