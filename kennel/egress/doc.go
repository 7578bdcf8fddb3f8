// Package egress is the kennel's one way out: an HTTP proxy that runs in a
// container of its own beside the kennels on each engine (as
// `fetch-shim egress serve`, from the kennel image), on the kennels' network
// (which has no route out) and on a network that reaches the world.
//
// It does two things, both for runs that present a run token (Token):
//
//   - Forward proxy (HTTPS_PROXY, HTTP_PROXY): CONNECT host:port and
//     absolute-form HTTP requests reach only the hosts allowed for the run —
//     those its coding CLI needs (Config.CLIHosts) and those the owner
//     allowed for its workspace (Config.Workspaces) — and never a loopback,
//     link-local (the cloud metadata address among them), multicast or
//     unspecified address, nor a gateway of the proxy's own networks (the
//     host machine). A private address is reached only through a host name
//     the owner allowed for the workspace. Nothing is added to what passes.
//   - API routes: /t/TOKEN/API/… is relayed to the API's upstream
//     (Config.APIs) with each placeholder the request carries in its
//     headers or query replaced by the real credential it stands for. The
//     kennel is given placeholders and this route as its CLI's base URL;
//     the real key never enters it. A placeholder sent anywhere else gets
//     nothing added.
//
// Every refusal is recorded for its run (Refusal) and read back by Fetch
// over the control socket (`fetch-shim egress events`), which is also how
// Fetch hands the proxy its configuration (`fetch-shim egress configure`,
// JSON on stdin): both are docker execs into the proxy's container, so they
// work the same on a remote engine. The configuration lives in the proxy's
// memory only.
//
// Imports: the standard library only (it is linked statically into
// fetch-shim). Concurrency: a Server is safe for concurrent use; Serve owns
// its listeners' goroutines and returns when its context ends and they are
// done.
package egress
