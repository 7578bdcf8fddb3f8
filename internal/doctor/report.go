package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Status is a check's verdict.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one line of the report.
type Check struct {
	// Name says what was checked: "engine local", "image", "cli claude".
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail is what was found.
	Detail string `json:"detail"`
	// Fix is the one command or setting that fixes a check that is not ok.
	Fix string `json:"fix,omitempty"`
}

// Report is the checks, in the order they ran.
type Report struct {
	Checks []Check `json:"checks"`
}

// Add appends checks.
func (r *Report) Add(c ...Check) { r.Checks = append(r.Checks, c...) }

// Count returns how many checks have status s.
func (r Report) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Failed tells whether a check failed.
func (r Report) Failed() bool { return r.Count(Fail) > 0 }

// WriteText writes one line per check and a summary line.
func (r Report) WriteText(w io.Writer) error {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-4s  %-*s  %s", c.Status, width, c.Name, c.Detail)
		if c.Status != OK && c.Fix != "" {
			fmt.Fprintf(&b, " — fix: %s", c.Fix)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%d ok, %d warn, %d fail\n", r.Count(OK), r.Count(Warn), r.Count(Fail))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object:
// {"ok": bool, "checks": [{"name", "status", "detail", "fix"}]}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		OK     bool    `json:"ok"`
		Checks []Check `json:"checks"`
	}{!r.Failed(), r.Checks})
}

// Summary is the checks that are not ok in one message ("" when all are):
// what fetch serve and fetch chat say at start.
func (r Report) Summary() string {
	var parts []string
	for _, c := range r.Checks {
		if c.Status == OK {
			continue
		}
		p := c.Name + ": " + c.Detail
		if c.Fix != "" {
			p += " (fix: " + c.Fix + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Not everything Fetch needs is ready:\n  - " + strings.Join(parts, "\n  - ") + "\nRun \"fetch doctor\" for all the checks."
}
