package harness

import (
	"fmt"
	"strings"
)

// Attachment is a file the user gave a task (a screenshot, a log). It is
// always a file in the work tree at Path, which the prompt names; a CLI
// whose protocol carries images inline (Claude Code's and Codex's image
// blocks, ACP's image parts where the agent takes them) also gets Data
// in that form. It never reaches a prompt as text.
type Attachment struct {
	// Name is the file's name as the user gave it, cleaned (no path).
	Name string `json:"name"`
	// MediaType is its type: "image/png", "text/plain", …
	MediaType string `json:"media_type"`
	// Path is where it is in the kennel: an absolute path inside the
	// run's work tree (under AttachDir).
	Path string `json:"path"`
	// Data is its content, for protocols that carry it inline; nil when
	// only the file is given.
	Data []byte `json:"-"`
}

// AttachDir is the folder of a work tree that holds the user's
// attachments, and OutDir the one whose files go back to the user with the
// result. Both are kept out of the task's branch.
const (
	AttachDir = ".fetch/in"
	OutDir    = ".fetch/out"
)

// IsImage tells whether the attachment is a picture a protocol can carry
// as an image block.
func (a Attachment) IsImage() bool {
	switch a.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// AttachmentNote is what a prompt says of attachments: each file's name,
// type and path, so that a CLI that cannot take them inline reads them
// from the work tree. Empty for none.
func AttachmentNote(atts []Attachment) string {
	if len(atts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThe user attached these files; read them from the work tree:")
	for _, a := range atts {
		fmt.Fprintf(&b, "\n- %s (%s): %s", a.Name, a.MediaType, a.Path)
	}
	return b.String()
}
