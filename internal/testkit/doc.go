// Package testkit holds the fakes shared by tests: Discord, OpenRouter,
// scripted coding CLIs, and the kennel test image (KennelImage, built from
// Dockerfile.kennel; KennelLayer adds files on top of it). It is imported by
// tests only. Helpers take testing.TB and fail the test on error.
//
// Tests that need Docker call RequireDocker: it skips when no engine answers,
// except under CI=true, where that is a failure.
package testkit
