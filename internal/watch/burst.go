package watch

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// change is what happened to a file during a burst.
type change string

const (
	created change = "created"
	changed change = "changed"
	removed change = "removed"
)

const (
	// maxTracked bounds the files remembered in one burst; more are
	// counted only.
	maxTracked = 10_000
	// maxListed is how many files of each kind a summary names.
	maxListed = 10
)

// burst is the changes gathered since the last report.
type burst struct {
	started  time.Time
	files    map[string]change
	extra    int
	overflow bool
}

func newBurst() *burst { return &burst{files: map[string]change{}} }

func (b *burst) empty() bool { return len(b.files) == 0 && b.extra == 0 && !b.overflow }

// add records a change, folding it into what the file went through
// already: created then changed is created, created then removed is
// nothing, removed then created is changed.
func (b *burst) add(path string, c change) {
	if b.empty() {
		b.started = time.Now()
	}
	prev, seen := b.files[path]
	switch {
	case !seen:
		if len(b.files) >= maxTracked {
			b.extra++
			return
		}
		b.files[path] = c
	case prev == created && c == removed:
		delete(b.files, path)
	case prev == created:
	case prev == removed && c == created:
		b.files[path] = changed
	default:
		b.files[path] = c
	}
}

// summary is the burst as one message.
func (b *burst) summary(workspace string) string {
	byKind := map[change][]string{}
	for p, c := range b.files {
		byKind[c] = append(byKind[c], p)
	}
	var counts []string
	var lists []string
	for _, c := range []change{created, changed, removed} {
		ps := byKind[c]
		if len(ps) == 0 {
			continue
		}
		sort.Strings(ps)
		counts = append(counts, fmt.Sprintf("%d %s", len(ps), c))
		shown := ps
		more := ""
		if len(ps) > maxListed {
			shown, more = ps[:maxListed], fmt.Sprintf(" … and %d more", len(ps)-maxListed)
		}
		lists = append(lists, fmt.Sprintf("%s: %s%s", c, strings.Join(shown, ", "), more))
	}
	if b.extra > 0 {
		counts = append(counts, fmt.Sprintf("%d more files", b.extra))
	}
	if b.overflow {
		counts = append(counts, "and more changes than I could follow")
	}
	head := fmt.Sprintf("👀 %s: %s", workspace, strings.Join(counts, ", "))
	if len(counts) == 0 {
		head = fmt.Sprintf("👀 %s: files changed", workspace)
	}
	return strings.Join(append([]string{head}, lists...), "\n")
}

func statDir(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}
