package discord_test

import (
	"bytes"
	"testing"

	"github.com/fetch-dev/fetch/internal/chat"
)

// TestSendsLargeFilesWithinTheUploadLimit: attachments over Discord's
// upload limit together go in messages of their own, which Discord takes.
func TestSendsLargeFilesWithinTheUploadLimit(t *testing.T) {
	e := start(t, 0, nil)
	big := bytes.Repeat([]byte("x"), 6<<20)
	if err := e.bot.Send(t.Context(), e.conv(), chat.Reply{Text: "two big files", Files: []chat.File{{Name: "a.bin", Data: big}, {Name: "b.bin", Data: big}}}); err != nil {
		t.Fatal(err)
	}
	ms := e.d.Messages(e.ch)
	var names []string
	for _, m := range ms {
		for _, f := range m.Files {
			names = append(names, f.Name)
		}
	}
	if len(ms) != 2 || len(names) != 2 {
		t.Fatalf("%d messages with files %v; want two, one file each", len(ms), names)
	}
}
