//go:build race

package journey

// raceEnabled tells whether the tests run under the race detector.
const raceEnabled = true
