// Package identity is who Fetch is and whom it works for: COLLAR.md (the
// persona and its directives), ALPHA.md (the owner's profile), agents/*.md
// (the harness pack: each coding CLI's role, strengths and routing hints,
// used to pick a harness when the owner names none) and skills/*/SKILL.md
// (guidance activated by trigger words in the owner's message).
//
// The defaults are embedded; a file of the same path in the overlay
// directory (in Fetch's data directory) replaces one, and new files add
// agents and skills. Open watches the overlay with fsnotify and reloads on
// every change, so edits apply to the next turn without a restart. A file
// that cannot be read keeps the last good identity and is logged.
//
// identity imports nothing of Fetch's own. A *Set is safe for concurrent
// use; Open starts its one watcher goroutine and Close stops and waits for
// it.
package identity
