// Package testkit holds the fakes shared by tests: Discord, OpenRouter,
// GitHub (NewGitHub: its REST routes, with real bare repositories behind it
// served over git's smart HTTP), scripted coding CLIs, the kennel test image
// (KennelImage, built from Dockerfile.kennel; KennelLayer adds files on top
// of it), and a second, real Docker engine (RemoteEngine: dockerd and sshd
// in a container, reached over TLS and SSH; the one FETCH_TEST_ENGINE names
// when set, as .ci/run does with cmd/fetch-test-engine, else one each test
// process starts). It is imported by tests only. Helpers take testing.TB and fail the test on error.
//
// Tests that need Docker call RequireDocker: it skips when no engine answers,
// except under CI=true, where that is a failure.
package testkit
