// Package doctor checks what Fetch needs and says, for each check, ok,
// warn or fail, and for what is not ok the one command or setting that
// fixes it: the Docker engines, the kennel image and the CLIs in it, the
// kennel's hardening as a process inside sees it, the data directory and
// the workspaces folder (for Fetch and for the kennel's user), each
// workspace's .git for hooks and configuration that would run a program
// (gitplant.go: read without running git, through os.Root), the
// database, free disk, the Discord token, the LLM key, each harness's key
// and the time zone.
//
// Each check is a small function over an interface defined here (an
// engine, a prober, Discord, the LLM key); cmd/fetch wires the real ones
// and decides which checks run (fetch doctor runs all; fetch serve and
// fetch chat run the fast ones at start). Outside errors are classified by
// the caller: Discord and LLMKey wrap ErrUnauthorized for a refused
// credential.
//
// Imports: kennel (the probe) and internal/store (the database's health).
// Concurrency: the functions are independent and hold no state.
package doctor
