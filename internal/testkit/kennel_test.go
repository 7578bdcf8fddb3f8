package testkit

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestKennelDockerfileRejectsUnknownCLIs(t *testing.T) {
	c := RequireDocker(t)
	root := repoRoot(t)
	kennelBaseImage(t, c, root)
	// The check runs before anything is downloaded, so this needs no network.
	err := buildImageErr(context.Background(), c, "fetch-kennel-test:unknown-cli", kennelContext(t, root), kennelBuildOptions("claude bogus"))
	if err == nil || !strings.Contains(err.Error(), "unknown CLI 'bogus'") {
		t.Errorf("build with CLIS=\"claude bogus\": %v", err)
	}
}

func TestKennelImageHasTheShimAndNoCLIs(t *testing.T) {
	c := RequireDocker(t)
	image := KennelImage(t)
	info, err := c.ImageInspect(context.Background(), image)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.User != "10001:10001" || !slices.Equal(info.Config.Entrypoint, []string{"/usr/local/bin/fetch-shim", "init"}) || len(info.Config.Cmd) != 0 {
		t.Errorf("image config: user %q, entrypoint %q, cmd %q", info.Config.User, info.Config.Entrypoint, info.Config.Cmd)
	}
	// The tag is a content hash: asking again finds the same image.
	if again := KennelImage(t); again != image {
		t.Errorf("KennelImage = %s, then %s", image, again)
	}
}
