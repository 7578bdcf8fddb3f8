package kennel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
)

// settings are what shapes a workspace's container, recorded as JSON in its
// LabelSettings so that a later Fetch can say which of them changed. None is
// secret: the container has no environment of its own.
type settings struct {
	Image    string  `json:"image"`    // the reference in Config.Image
	ImageID  string  `json:"image_id"` // what it resolved to: a rebuilt tag counts
	User     string  `json:"user"`
	Memory   int64   `json:"memory"`
	CPUs     float64 `json:"cpus"`
	Pids     int64   `json:"pids"`
	TmpSize  int64   `json:"tmp_size"`
	HomeSize int64   `json:"home_size"`
	// Spec is a hash of the whole container definition as this Fetch builds
	// it (hardening, mounts, tmpfs options, network, restart policy): a
	// Fetch that builds containers differently recreates them too.
	Spec string `json:"spec"`
}

// wantedContainer is a workspace's container as the current configuration
// makes it.
type wantedContainer struct {
	config      *container.Config
	host        *container.HostConfig
	settings    settings
	fingerprint string // LabelConfig: a hash of settings
}

// wanted resolves the image and builds the workspace's container definition
// with its fingerprint. A missing image is ErrImageMissing.
func (k *Kennel) wanted(ctx context.Context, workspace string) (wantedContainer, error) {
	imageID, err := k.EnsureImage(ctx)
	if err != nil {
		return wantedContainer{}, err
	}
	cfg, host := k.containerConfig(workspace)
	spec, err := json.Marshal([]any{cfg, host})
	if err != nil {
		return wantedContainer{}, fmt.Errorf("kennel: container definition: %w", err)
	}
	s := settings{
		Image: k.cfg.Image, ImageID: imageID, User: k.cfg.User,
		Memory: k.cfg.Memory, CPUs: k.cfg.CPUs, Pids: k.cfg.Pids,
		TmpSize: k.cfg.TmpSize, HomeSize: k.cfg.HomeSize,
		Spec: hashOf(spec),
	}
	recorded, err := json.Marshal(s)
	if err != nil {
		return wantedContainer{}, fmt.Errorf("kennel: container settings: %w", err)
	}
	w := wantedContainer{config: cfg, host: host, settings: s, fingerprint: hashOf(recorded)}
	cfg.Labels[LabelConfig] = w.fingerprint
	cfg.Labels[LabelSettings] = string(recorded)
	return w, nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// changedSettings names the settings that differ between a container's
// labels and w, sorted; "unrecorded" when the container does not say what
// it was created with (an older Fetch made it).
func changedSettings(labels map[string]string, w wantedContainer) []string {
	var old map[string]any
	if err := json.Unmarshal([]byte(labels[LabelSettings]), &old); err != nil || old == nil {
		return []string{"unrecorded"}
	}
	var cur map[string]any
	b, _ := json.Marshal(w.settings) // marshalled before by wanted
	_ = json.Unmarshal(b, &cur)
	keys := slices.Sorted(maps.Keys(cur))
	for k := range old {
		if _, ok := cur[k]; !ok {
			keys = append(keys, k)
		}
	}
	var changed []string
	for _, key := range keys {
		if fmt.Sprint(old[key]) != fmt.Sprint(cur[key]) {
			changed = append(changed, key)
		}
	}
	if len(changed) == 0 {
		return []string{"unrecorded"} // same settings, other fingerprint
	}
	return changed
}

// imageName is "reference@id" for logs, the ID shortened.
func imageName(ref, id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		id = id[:12]
	}
	return ref + "@" + id
}

// retire is called, under createMu, for the workspace's running container
// when its fingerprint is not the configuration's. It removes the container if
// nothing holds it and reports whether it did; a held container is kept, and
// the first time it is kept that is logged. When the container is removed it
// is no longer the workspace's container for this Kennel, so no run can
// claim it meanwhile.
func (k *Kennel) retire(ctx context.Context, log *slog.Logger, workspace string, info container.InspectResponse, w wantedContainer) (bool, error) {
	changes := []any{
		logOldImage, imageName(info.Config.Image, info.Image),
		logNewImage, imageName(w.settings.Image, w.settings.ImageID),
		logChanged, changedSettings(info.Config.Labels, w),
	}
	holders, err := k.holders(ctx, info.ID, time.Time{})
	if errors.Is(err, errContainerGone) {
		return true, nil // died meanwhile; the caller's next look recreates it
	}
	if err != nil {
		// Not knowing is not idle: keep it, and look again next time.
		log.Warn("kennel: configuration changed, but whether the workspace's container is idle is unknown; keeping it", append(changes, logErr, err)...)
		return false, nil
	}
	k.mu.Lock()
	for key, r := range k.runs {
		if key.workspace == workspace && r.ctr == info.ID {
			holders = append(holders, "run "+key.task)
		}
	}
	idle := len(holders) == 0
	if idle {
		if c, ok := k.containers[workspace]; ok && c.id == info.ID {
			delete(k.containers, workspace) // from now on no run can claim it
		}
		delete(k.kept, workspace)
	}
	first := !idle && k.kept[workspace] != info.ID
	if first {
		k.kept[workspace] = info.ID
	}
	k.mu.Unlock()
	if !idle {
		if first {
			log.Info("kennel: configuration changed; the workspace's container is busy and will be recreated when idle", append(changes, logBusy, holders)...)
		}
		return false, nil
	}
	log.Info("kennel: configuration changed; recreating the workspace's container", changes...)
	err = k.docker.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return false, fmt.Errorf("kennel: remove %s: %w", strings.TrimPrefix(info.Name, "/"), classify(err))
	}
	return true, nil
}

// holders lists what, as seen from the engine, keeps a container from being
// recreated or put to sleep: the shim's tasks that are running, have live
// processes, or whose log has not been read back and forgotten (it lives in
// the container's tmpfs) — unless the task ended before logsBefore (zero:
// every such log holds); and execs running in the container (another
// Fetch's runs a moment before their wrapper shows in the shim's state, its
// control commands, someone's docker exec). An exec created but not yet
// started is not seen. The shim is asked first, so that its own exec is
// over when the execs are listed.
func (k *Kennel) holders(ctx context.Context, ctr string, logsBefore time.Time) ([]string, error) {
	tasks, err := k.tasksIn(ctx, ctr)
	if err != nil {
		return nil, err
	}
	var holders []string
	for _, t := range tasks {
		switch {
		case t.Running || len(t.Pids) > 0:
			holders = append(holders, "task "+t.ID)
		case t.HasLog && (t.Exit == nil || !t.Exit.Ended.Before(logsBefore)):
			holders = append(holders, "unread log of task "+t.ID)
		}
	}
	execs, err := k.runningExecs(ctx, ctr)
	if err != nil {
		return nil, err
	}
	return append(holders, execs...), nil
}

// runningExecs lists the execs running in a container ("exec ID");
// errContainerGone when it is gone.
func (k *Kennel) runningExecs(ctx context.Context, ctr string) ([]string, error) {
	info, err := k.docker.ContainerInspect(ctx, ctr)
	if cerrdefs.IsNotFound(err) {
		return nil, errContainerGone
	}
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", classify(err))
	}
	if info.State == nil || !info.State.Running {
		return nil, errContainerGone
	}
	var running []string
	for _, id := range info.ExecIDs {
		ex, err := k.docker.ContainerExecInspect(ctx, id)
		if cerrdefs.IsNotFound(err) {
			continue // ended since
		}
		if err != nil {
			return nil, fmt.Errorf("inspect exec: %w", classify(err))
		}
		if ex.Running {
			running = append(running, "exec "+id[:min(12, len(id))])
		}
	}
	return running, nil
}

// claim records that a run is about to use ctr, so that ctr is not retired
// under it; false when ctr is no longer the workspace's container.
func (k *Kennel) claim(live *liveRun, workspace, ctr string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c, ok := k.containers[workspace]; !ok || c.id != ctr {
		live.ctr = ""
		return false
	}
	live.ctr = ctr
	return true
}
