// Package deptest holds no code: its test enforces the direction of
// imports between Fetch's packages (ARCHITECTURE.md, "Dependency
// direction") with go list, so that the layering cannot erode silently.
package deptest
