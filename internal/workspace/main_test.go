package workspace_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/docker/docker/client"
	"go.uber.org/goleak"
)

// sharedDocker is the Docker client of the kennel the tests share; it is
// closed after the last test.
var sharedDocker *client.Client

// TestMain checks that nothing leaks a goroutine (an upload's tar writer,
// a Docker client's connections), once the shared client is closed.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDocker != nil {
		sharedDocker.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
