package testkit

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// KennelBase is the local base image the kennel test image is built on;
// scripts/kennel-base.sh builds it from Debian packages when it is missing.
const KennelBase = "fetch-base:bookworm"

// KennelTestRepo is the repository name of the kennel test image; the tag is a
// hash of what goes into it.
const KennelTestRepo = "fetch-kennel-test"

// dockerPingTimeout bounds the check that an engine answers.
const dockerPingTimeout = 5 * time.Second

// RequireDocker returns a client for the local Docker engine (API version
// negotiated). When no engine answers it skips the test, except under CI=true
// where a missing engine fails it: tests that need Docker must run in CI.
// Under -short (the quick loop) it skips: real containers take minutes.
func RequireDocker(t testing.TB) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("testkit: needs Docker; skipped by -short (the full suite runs it)")
	}
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), dockerPingTimeout)
		_, err = c.Ping(ctx)
		cancel()
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testkit: Docker is required under CI=true: %v", err)
		}
		t.Skipf("testkit: no Docker engine: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// KennelImage returns the kennel test image: Dockerfile.kennel built on
// KennelBase with no CLIs and a fetch-shim built from this checkout. The tag is
// a hash of the Dockerfile, the shim's sources, the Go version and the base
// image, so an existing image is reused until one of them changes, across test
// processes; concurrent builders produce the same image.
func KennelImage(t testing.TB) string {
	t.Helper()
	c := RequireDocker(t)
	ctx := context.Background()
	root := repoRoot(t)
	baseID := kennelBaseImage(t, c, root)

	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", runtime.Version(), baseID)
	for _, src := range kennelSources(t, root) {
		b, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			t.Fatalf("testkit: %v", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", src, len(b))
		h.Write(b)
	}
	tag := KennelTestRepo + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if imageExists(t, c, tag) {
		return tag
	}

	buildImage(t, c, ctx, tag, kennelContext(t, root), kennelBuildOptions(""))
	return tag
}

// kennelContext is the build context of Dockerfile.kennel: the Dockerfile and
// a fetch-shim built from this checkout.
func kennelContext(t testing.TB, root string) []ImageFile {
	t.Helper()
	shimBin := filepath.Join(t.TempDir(), "fetch-shim")
	if err := BuildShim(shimBin); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile.kennel"))
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	shimData, err := os.ReadFile(shimBin)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return []ImageFile{
		{Path: "Dockerfile.kennel", Mode: 0o644, Data: dockerfile},
		{Path: "build/fetch-shim", Mode: 0o755, Data: shimData},
		// No CLI given as a file (scripts/build-images.sh --cli NAME=FILE).
		{Path: "build/clis/.keep", Mode: 0o644},
	}
}

// BuildShim builds this checkout's fetch-shim, static (CGO_ENABLED=0) for
// Linux, as the kennel image has it, at path.
func BuildShim(path string) error {
	root, err := checkoutRoot()
	if err != nil {
		return err
	}
	cmd := exec.Command(goTool(), "build", "-trimpath", "-o", path, "./cmd/fetch-shim")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build fetch-shim: %w\n%s", err, out)
	}
	return nil
}

// kennelBuildOptions builds Dockerfile.kennel on KennelBase with the given CLIs.
func kennelBuildOptions(clis string) build.ImageBuildOptions {
	return build.ImageBuildOptions{
		Dockerfile: "Dockerfile.kennel",
		BuildArgs: map[string]*string{
			"BASE": ptr(KennelBase),
			"CLIS": ptr(clis),
			"SHIM": ptr("build/fetch-shim"),
		},
	}
}

// ImageFile is a file to put into an image.
type ImageFile struct {
	Path string // absolute in the image for KennelLayer; relative to the build context otherwise
	Mode fs.FileMode
	Data []byte
}

// KennelLayer builds an image FROM base with files added (owned by root, with
// their modes) and returns its tag, repo:hash of the base image and the files;
// an existing image with that tag is reused. It is how test images with fake
// programs are made on top of KennelImage.
func KennelLayer(t testing.TB, base, repo string, files []ImageFile) string {
	t.Helper()
	c := RequireDocker(t)
	baseInfo, err := c.ImageInspect(context.Background(), base)
	if err != nil {
		t.Fatalf("testkit: base image %s: %v", base, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", baseInfo.ID)
	var dockerfile strings.Builder
	fmt.Fprintf(&dockerfile, "FROM %s\n", base)
	ctxFiles := make([]ImageFile, 0, len(files)+1)
	for i, f := range files {
		if !filepath.IsAbs(f.Path) {
			t.Fatalf("testkit: image file %q: want an absolute path", f.Path)
		}
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
		name := fmt.Sprintf("f%d", i)
		ctxFiles = append(ctxFiles, ImageFile{Path: name, Mode: f.Mode, Data: f.Data})
		// JSON form: paths may hold spaces.
		src, _ := json.Marshal(name)
		dst, _ := json.Marshal(f.Path)
		fmt.Fprintf(&dockerfile, "COPY [%s, %s]\n", src, dst)
	}
	tag := repo + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if imageExists(t, c, tag) {
		return tag
	}
	ctxFiles = append(ctxFiles, ImageFile{Path: "Dockerfile", Mode: 0o644, Data: []byte(dockerfile.String())})
	buildImage(t, c, context.Background(), tag, ctxFiles, build.ImageBuildOptions{Dockerfile: "Dockerfile"})
	return tag
}

// KennelWorkspace returns a new empty directory that the kennel user (uid
// 10001) can write in, to mount as a workspace. Files the container creates
// belong to that uid; t.TempDir's cleanup removes them when the tests run as
// root (as in CI), and top-level ones otherwise.
func KennelWorkspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return dir
}

// buildImage builds an image from files (the build context) and fails the
// test when the build fails.
func buildImage(t testing.TB, c *client.Client, ctx context.Context, tag string, files []ImageFile, opts build.ImageBuildOptions) {
	t.Helper()
	t.Logf("testkit: building image %s", tag)
	if err := buildImageErr(ctx, c, tag, files, opts); err != nil {
		t.Fatalf("testkit: build %s: %v", tag, err)
	}
	if !imageExists(t, c, tag) {
		t.Fatalf("testkit: build %s: no image after the build", tag)
	}
}

// buildImageErr builds an image with the classic builder (the engine here is
// 20.10, without BuildKit through the API).
func buildImageErr(ctx context.Context, c *client.Client, tag string, files []ImageFile, opts build.ImageBuildOptions) error {
	buildContext, err := tarFiles(files)
	if err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	opts.Tags = []string{tag}
	opts.Remove, opts.ForceRemove = true, true
	opts.Version = build.BuilderV1
	resp, err := c.ImageBuild(ctx, buildContext, opts)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readBuildStream(resp.Body)
}

// tarFiles is a tar of files owned by root, with their modes.
func tarFiles(files []ImageFile) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Path, Mode: int64(f.Mode.Perm()), Size: int64(len(f.Data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// readBuildStream reads the build's JSON messages to the end and returns the
// error one of them reports, with the last lines of output for context.
func readBuildStream(r io.Reader) error {
	var tail []string
	dec := json.NewDecoder(r)
	for {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		if msg.Error != "" {
			return fmt.Errorf("%s\n%s", msg.Error, strings.Join(tail, ""))
		}
		if msg.Stream != "" {
			tail = append(tail, msg.Stream)
			if len(tail) > 20 {
				tail = tail[1:]
			}
		}
	}
}

// kennelBaseImage returns the ID of KennelBase, building it with
// scripts/kennel-base.sh when it is missing.
func kennelBaseImage(t testing.TB, c *client.Client, root string) string {
	t.Helper()
	info, err := c.ImageInspect(context.Background(), KennelBase)
	if cerrdefs.IsNotFound(err) {
		t.Logf("testkit: %s missing; running scripts/kennel-base.sh", KennelBase)
		cmd := exec.Command("bash", filepath.Join(root, "scripts", "kennel-base.sh"), KennelBase)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("testkit: scripts/kennel-base.sh: %v\n%s", err, out)
		}
		info, err = c.ImageInspect(context.Background(), KennelBase)
	}
	if err != nil {
		t.Fatalf("testkit: base image %s: %v", KennelBase, err)
	}
	return info.ID
}

func imageExists(t testing.TB, c *client.Client, ref string) bool {
	t.Helper()
	_, err := c.ImageInspect(context.Background(), ref)
	if cerrdefs.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("testkit: inspect image %s: %v", ref, err)
	}
	return true
}

// kennelSources lists the files, relative to the repository root, that go
// into the kennel image: the Dockerfile and the shim's non-test Go sources.
func kennelSources(t testing.TB, root string) []string {
	t.Helper()
	srcs := []string{"Dockerfile.kennel"}
	for _, dir := range []string{"cmd/fetch-shim", "kennel/shim"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatalf("testkit: %v", err)
		}
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				srcs = append(srcs, dir+"/"+n)
			}
		}
	}
	slices.Sort(srcs)
	return srcs
}

// repoRoot is the root of this checkout (checkoutRoot); the test fails
// when it cannot be found.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := checkoutRoot()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return root
}

// module is this repository's Go module path.
const module = "github.com/fetch-dev/fetch"

// checkoutRoot is the root of the checkout this package was built from:
// found from this file's path, or, in a program built with -trimpath
// (whose paths are the module's, as CI runs fetch-test-engine), from the
// working directory up to the go.mod of this module.
func checkoutRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if ok && filepath.IsAbs(file) {
		return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..")), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot locate the repository: %w", err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == module {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("cannot locate the repository: no go.mod of %s above the working directory", module)
		}
		dir = up
	}
}

// modulePath is the module path a go.mod declares.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func ptr[T any](v T) *T { return &v }
