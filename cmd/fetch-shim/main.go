// Command fetch-shim runs inside the kennel container around every process Fetch
// starts there: it gives each task its own process group, pid and log files, and
// stops it on request. See package github.com/fetch-dev/fetch/kennel/shim.
//
// Build it static for the image: CGO_ENABLED=0 go build -o build/fetch-shim ./cmd/fetch-shim
package main

import (
	"context"
	"os"

	"github.com/fetch-dev/fetch/kennel/shim"
)

func main() {
	os.Exit(shim.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
