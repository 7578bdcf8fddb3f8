// Package journey holds end-to-end journeys of the real, built fetch
// binary: each test builds ./cmd/fetch once per test process, starts
// `fetch serve` as a child process against the fakes of internal/testkit (a
// fake Discord REST API and gateway, a fake OpenRouter, the kennel test
// image with the scripted coding CLIs on a real Docker engine) and drives a
// whole journey as the owner would: DMs, button clicks and slash commands.
//
// The journeys assert only what a user or the world sees: messages and
// their edits in the fake Discord, processes in the kennel container,
// files and branches in the workspace, and what a restarted fetch says.
// They do not read fetch's database; a restart is the way to find out what
// was persisted.
//
// Every wait is bounded (see waitTimeout), so a deadlock in fetch fails a
// journey with the messages seen so far and fetch's log, instead of hanging
// until the go test timeout.
//
// Run them with the rest (go test -race ./...) or alone:
//
//	go test -race ./journey/
//	go test -run '^$' -bench StopLatency -benchtime 20x ./journey/
//
// They need a Docker engine (skipped without one, failed under CI=true, as
// testkit.RequireDocker does) and take a minute or two: they run four at a
// time unless -parallel says otherwise, and the reminder journey keeps
// fetch down for over a minute, as lateness is measured in minutes.
//
// The package has no code of its own besides this comment; it is imported
// by nothing.
package journey
