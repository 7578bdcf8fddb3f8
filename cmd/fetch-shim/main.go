// Command fetch-shim runs inside the kennel container around every process Fetch
// starts there: it gives each task its own process group, pid and log files, and
// stops it on request. See package github.com/fetch-dev/fetch/kennel/shim.
//
// `fetch-shim egress …` is the kennel's way out instead: the proxy that runs in
// a container of its own beside the kennels (package kennel/egress).
//
// Build it static for the image: CGO_ENABLED=0 go build -o build/fetch-shim ./cmd/fetch-shim
package main

import (
	"context"
	"os"

	"github.com/fetch-dev/fetch/kennel/egress"
	"github.com/fetch-dev/fetch/kennel/shim"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "egress" {
		os.Exit(egress.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(shim.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
