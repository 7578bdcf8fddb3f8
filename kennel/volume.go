package kennel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
)

// LabelVolume marks the named volumes that hold workspaces (Config.Volumes);
// its value is the workspace's path.
const LabelVolume = "fetch.kennel.workspace-volume"

// volumeName is the named volume of a workspace: the instance and a hash of
// its path (a path has characters a volume name may not).
func (k *Kennel) volumeName(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return "fetch-ws-" + k.cfg.Instance + "-" + hex.EncodeToString(sum[:8])
}

// workspaceMount is where the workspace's files come from: the host path
// itself (the same path in the container), or its named volume.
func (k *Kennel) workspaceMount(workspace string) mount.Mount {
	if k.cfg.Volumes {
		// NoCopy: an empty volume would otherwise take the image's
		// ownership of the mount point (root) at every mount, undoing
		// prepareVolume's chown.
		return mount.Mount{Type: mount.TypeVolume, Source: k.volumeName(workspace), Target: workspace, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}
	}
	return mount.Mount{Type: mount.TypeBind, Source: workspace, Target: workspace}
}

// prepareVolume creates the workspace's volume when it is missing and gives
// its root to the kennel's user, who must write it (a new volume's root
// belongs to root). The chown runs in a one-off container of the kennel
// image with only the CHOWN capability and no network.
func (k *Kennel) prepareVolume(ctx context.Context, workspace string) error {
	name := k.volumeName(workspace)
	if _, err := k.docker.VolumeCreate(ctx, volume.CreateOptions{
		Name:   name,
		Labels: map[string]string{LabelInstance: k.cfg.Instance, LabelVolume: workspace},
	}); err != nil {
		return fmt.Errorf("kennel: volume for %s: %w", workspace, classify(err))
	}
	cfg := &container.Config{
		Image:      k.cfg.Image,
		User:       "0:0",
		Entrypoint: []string{"chown", k.cfg.User, workspace},
		Labels:     map[string]string{LabelInstance: k.cfg.Instance},
	}
	host := &container.HostConfig{
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"CHOWN"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		NetworkMode:    "none",
		Mounts:         []mount.Mount{k.workspaceMount(workspace)},
	}
	resp, err := k.docker.ContainerCreate(ctx, cfg, host, &network.NetworkingConfig{}, nil, "")
	if err != nil {
		return fmt.Errorf("kennel: prepare the volume of %s: %w", workspace, classify(err))
	}
	defer k.docker.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
	waitC, errC := k.docker.ContainerWait(ctx, resp.ID, container.WaitConditionNextExit)
	if err := k.docker.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("kennel: prepare the volume of %s: %w", workspace, classify(err))
	}
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			return fmt.Errorf("kennel: prepare the volume of %s: chown exited %d", workspace, w.StatusCode)
		}
	case err := <-errC:
		return fmt.Errorf("kennel: prepare the volume of %s: %w", workspace, classify(err))
	case <-ctx.Done():
		return fmt.Errorf("kennel: prepare the volume of %s: %w", workspace, ctx.Err())
	}
	return nil
}

// RemoveVolume removes a workspace's volume with everything in it (after
// its container: Remove first). A missing volume is fine; without
// Config.Volumes there is none.
func (k *Kennel) RemoveVolume(ctx context.Context, workspace string) error {
	if !k.cfg.Volumes {
		return nil
	}
	if err := checkWorkspace(workspace); err != nil {
		return fmt.Errorf("kennel: remove volume: %w", err)
	}
	err := k.docker.VolumeRemove(ctx, k.volumeName(workspace), true)
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("kennel: remove the volume of %s: %w", workspace, classify(err))
	}
	return nil
}
