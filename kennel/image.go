package kennel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// ImageSource is the engine an image is copied from; *Engine and
// *client.Client implement it.
type ImageSource interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageSave(ctx context.Context, images []string, opts ...client.ImageSaveOption) (io.ReadCloser, error)
}

// ImageTarget is the engine an image is copied to; *Engine and
// *client.Client implement it.
type ImageTarget interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageLoad(ctx context.Context, input io.Reader, opts ...client.ImageLoadOption) (image.LoadResponse, error)
}

// EnsureImage makes sure that to has the image ref as from has it (same image
// ID), and reports whether it had to copy it. The copy streams `docker save`
// on from into `docker load` on to, with no file in between; the image is
// checked on to afterwards.
//
// A copy that breaks leaves nothing half-tagged: dockerd unpacks the whole
// archive before it registers any layer or tag (and loads each image of an
// archive atomically), so a stream cut in the middle loads nothing, and a
// retry starts afresh. The error says which engine went away and how much
// had been sent. Engines are named by their Name method when they have one
// (*Engine does).
//
// The engines must run containers of the same platform: the copy does not
// convert an image.
func EnsureImage(ctx context.Context, from ImageSource, to ImageTarget, ref string) (copied bool, err error) {
	src, err := from.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return false, fmt.Errorf("kennel: copy image %s: engine %s does not have it: %w: %w", ref, engineName(from), ErrImageMissing, err)
	}
	if err != nil {
		return false, fmt.Errorf("kennel: copy image %s: inspect on engine %s: %w", ref, engineName(from), classify(err))
	}
	have, err := to.ImageInspect(ctx, ref)
	switch {
	case err == nil && have.ID == src.ID:
		return false, nil
	case err != nil && !cerrdefs.IsNotFound(err):
		return false, fmt.Errorf("kennel: copy image %s: inspect on engine %s: %w", ref, engineName(to), classify(err))
	}

	saved, err := from.ImageSave(ctx, []string{ref})
	if err != nil {
		return false, fmt.Errorf("kennel: copy image %s: save on engine %s: %w", ref, engineName(from), classify(err))
	}
	defer saved.Close()
	stream := &countingReader{r: saved}
	if err := load(ctx, to, stream); err != nil {
		gone, cause := engineName(to), err
		if srcErr := stream.failed(); srcErr != nil { // the source broke off, and the load with it
			gone, cause = engineName(from), srcErr
		}
		return false, fmt.Errorf("kennel: copy image %s from %s to %s: engine %s went away while the image was copied (%s of %s sent; nothing was tagged, try again): %w",
			ref, engineName(from), engineName(to), gone, byteSize(stream.n.Load()), byteSize(src.Size), classify(cause))
	}

	got, err := to.ImageInspect(ctx, ref)
	if err != nil {
		return true, fmt.Errorf("kennel: copy image %s: inspect on engine %s after the copy: %w", ref, engineName(to), classify(err))
	}
	if got.ID != src.ID {
		return true, fmt.Errorf("kennel: copy image %s: engine %s has image %s after the copy, engine %s has %s (was the tag moved meanwhile?)",
			ref, engineName(to), got.ID, engineName(from), src.ID)
	}
	return true, nil
}

// load runs ImageLoad to its end; the stream of messages carries the error
// of a load that failed after it started.
func load(ctx context.Context, to ImageTarget, r io.Reader) error {
	resp, err := to.ImageLoad(ctx, r, client.ImageLoadWithQuiet(true))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !resp.JSON {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	return jsonmessage.DisplayJSONMessagesStream(resp.Body, io.Discard, 0, false, nil)
}

// countingReader counts what passes through it and keeps its read error
// (ImageLoad reads it on the HTTP transport's goroutine).
type countingReader struct {
	r   io.Reader
	n   atomic.Int64
	err atomic.Pointer[error] // the first read error other than EOF
}

// failed is the read error the reader returned, nil if none.
func (c *countingReader) failed() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		c.err.CompareAndSwap(nil, &err)
	}
	return n, err
}

// engineName is the engine's Name if it has one, else its daemon address.
func engineName(e any) string {
	switch e := e.(type) {
	case interface{ Name() string }:
		return fmt.Sprintf("%q", e.Name())
	case interface{ DaemonHost() string }:
		return e.DaemonHost()
	default:
		return fmt.Sprintf("%T", e)
	}
}

// byteSize is n in MB with one decimal.
func byteSize(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
