package progress

import (
	"fmt"
	"strings"

	"github.com/fetch-dev/fetch/internal/chat"
	"github.com/fetch-dev/fetch/internal/task"
)

// maxOutLines bounds the lines a result gives the files its CLI left.
const maxOutLines = 8

// outNote is what a result says of the files the run's CLI left for the
// owner (task.Task.Out): those attached, and those not sent with why.
func outNote(t task.Task) string {
	if len(t.Out) == 0 {
		return ""
	}
	var sent []string
	var b strings.Builder
	lines := 0
	for _, f := range t.Out {
		switch {
		case f.Skipped != "":
			if lines == maxOutLines {
				continue
			}
			lines++
			fmt.Fprintf(&b, "\n  %s: %s", clip(oneLine(f.Name), 80), clip(oneLine(f.Skipped), 160))
		case f.Data != nil:
			sent = append(sent, fmt.Sprintf("%s (%s)", clip(oneLine(f.Name), 80), Size(f.Size)))
		}
	}
	head := "\n\nThe CLI left files for you, not sent:"
	if len(sent) > 0 {
		head = "\n\nThe CLI sent you: " + strings.Join(sent, ", ")
		if b.Len() > 0 {
			head += "\nNot sent:"
		}
	}
	return head + b.String()
}

// outAttachments are the files the run's CLI left that go with the result.
func outAttachments(t task.Task) []chat.File {
	var files []chat.File
	for _, f := range t.Out {
		if f.Skipped == "" && f.Data != nil {
			files = append(files, chat.File{Name: f.Name, Data: f.Data})
		}
	}
	return files
}

// Size is n bytes for a person: "512 B", "1.5 KiB", "8.0 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
