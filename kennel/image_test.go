package kennel_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/fetch-dev/fetch/kennel"
)

// fakeImages is an engine with images by reference, for EnsureImage: its
// save stream breaks after saveLimit bytes, its load after loadLimit (0:
// never). A load that reads its stream to the end stores the image.
type fakeImages struct {
	name      string
	ids       map[string]string
	saveLimit int
	loadLimit int
	loads     int
}

func (f *fakeImages) Name() string { return f.name }

func (f *fakeImages) ImageInspect(_ context.Context, ref string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	id, ok := f.ids[ref]
	if !ok {
		return image.InspectResponse{}, cerrdefs.ErrNotFound.WithMessage("no such image: " + ref)
	}
	return image.InspectResponse{ID: id, Size: 10 << 20}, nil
}

// archiveSize is the size of a fake saved image.
const archiveSize = 10 << 20

func (f *fakeImages) ImageSave(_ context.Context, refs []string, _ ...client.ImageSaveOption) (io.ReadCloser, error) {
	archive := io.Reader(strings.NewReader(f.ids[refs[0]] + strings.Repeat("x", archiveSize)))
	if f.saveLimit > 0 {
		archive = io.MultiReader(io.LimitReader(archive, int64(f.saveLimit)), errReader{errors.New("read tcp: connection reset by peer")})
	}
	return io.NopCloser(archive), nil
}

func (f *fakeImages) ImageLoad(_ context.Context, r io.Reader, _ ...client.ImageLoadOption) (image.LoadResponse, error) {
	f.loads++
	if f.loadLimit > 0 {
		io.CopyN(io.Discard, r, int64(f.loadLimit))
		return image.LoadResponse{}, errors.New("write tcp: broken pipe")
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return image.LoadResponse{}, err
	}
	id := strings.TrimRight(string(b), "x")
	f.ids["ref"] = id
	return image.LoadResponse{Body: io.NopCloser(&bytes.Buffer{}), JSON: true}, nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestEnsureImageFake(t *testing.T) {
	from := &fakeImages{name: "here", ids: map[string]string{"ref": "sha256:new"}}
	to := &fakeImages{name: "there", ids: map[string]string{"ref": "sha256:old"}}
	copied, err := kennel.EnsureImage(t.Context(), from, to, "ref")
	if err != nil || !copied || to.ids["ref"] != "sha256:new" {
		t.Fatalf("EnsureImage over an older image: copied %v, %v, target has %s", copied, err, to.ids["ref"])
	}
	copied, err = kennel.EnsureImage(t.Context(), from, to, "ref")
	if err != nil || copied || to.loads != 1 {
		t.Errorf("EnsureImage again: copied %v, %v, %d loads", copied, err, to.loads)
	}
}

func TestEnsureImageMissingAtTheSource(t *testing.T) {
	from := &fakeImages{name: "here", ids: map[string]string{}}
	to := &fakeImages{name: "there", ids: map[string]string{}}
	_, err := kennel.EnsureImage(t.Context(), from, to, "ref")
	if !errors.Is(err, kennel.ErrImageMissing) || !strings.Contains(err.Error(), `engine "here" does not have it`) {
		t.Errorf("EnsureImage: %v", err)
	}
}

func TestEnsureImageEngineGoesAway(t *testing.T) {
	tests := []struct {
		name     string
		from, to *fakeImages
		want     string
	}{
		{
			"source",
			&fakeImages{name: "here", ids: map[string]string{"ref": "sha256:new"}, saveLimit: 3 << 20},
			&fakeImages{name: "there", ids: map[string]string{}},
			`engine "here" went away while the image was copied (3.1 MB of 10.5 MB sent; nothing was tagged, try again): read tcp: connection reset by peer`,
		},
		{
			"target",
			&fakeImages{name: "here", ids: map[string]string{"ref": "sha256:new"}},
			&fakeImages{name: "there", ids: map[string]string{}, loadLimit: 1 << 20},
			`engine "there" went away while the image was copied (1.0 MB of 10.5 MB sent; nothing was tagged, try again): write tcp: broken pipe`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			copied, err := kennel.EnsureImage(t.Context(), tt.from, tt.to, "ref")
			if copied || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EnsureImage: copied %v, %v\nwant %q", copied, err, tt.want)
			}
			if _, ok := tt.to.ids["ref"]; ok {
				t.Error("the target has the image after a broken copy")
			}
		})
	}
}
