package intent

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// example is one labelled message from a corpus file.
type example struct {
	line int
	want Kind
	ctx  Context
	text string
}

// readCorpus parses a corpus file: tab-separated label, context flags ("-"
// or a comma-separated list of "await" and "running") and text; "#" lines are comments.
func readCorpus(tb testing.TB, name string) []example {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []example
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.SplitN(line, "\t", 3)
		if len(cols) != 3 {
			tb.Fatalf("%s:%d: want 3 tab-separated columns, got %d", name, n, len(cols))
		}
		ex := example{line: n, want: Kind(cols[0]), text: cols[2]}
		if !ex.want.Valid() {
			tb.Fatalf("%s:%d: unknown label %q", name, n, cols[0])
		}
		if cols[1] != "-" {
			for flag := range strings.SplitSeq(cols[1], ",") {
				switch flag {
				case "await":
					ex.ctx.AwaitingConfirmation = true
				case "running":
					ex.ctx.TaskRunning = true
				default:
					tb.Fatalf("%s:%d: unknown context flag %q", name, n, flag)
				}
			}
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var kinds = []Kind{Conversation, Inquiry, Action, Clarify}

// checkCorpus classifies every example of a corpus, logs a per-class
// accuracy table and the misclassified messages, and fails when the overall
// accuracy is below min or the corpus is smaller than size.
func checkCorpus(t *testing.T, name string, size int, min float64) {
	c := New()
	examples := readCorpus(t, name)
	if len(examples) < size {
		t.Errorf("%s has %d messages, want at least %d", name, len(examples), size)
	}
	total := map[Kind]int{}
	right := map[Kind]int{}
	var misses strings.Builder
	for _, ex := range examples {
		got := c.Classify(ex.text, ex.ctx)
		total[ex.want]++
		if got.Kind == ex.want {
			right[ex.want]++
			continue
		}
		fmt.Fprintf(&misses, "  %s:%d want %-12s got %-12s rule %-17s await=%-5t %q\n",
			name, ex.line, ex.want, got.Kind, got.Rule, ex.ctx.AwaitingConfirmation, ex.text)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-13s %5s %5s %8s\n", "class", "right", "total", "accuracy")
	all, allRight := 0, 0
	for _, k := range kinds {
		all += total[k]
		allRight += right[k]
		fmt.Fprintf(&table, "%-13s %5d %5d %7.1f%%\n", k, right[k], total[k], percent(right[k], total[k]))
	}
	acc := percent(allRight, all)
	fmt.Fprintf(&table, "%-13s %5d %5d %7.1f%%\n", "overall", allRight, all, acc)
	t.Logf("%s accuracy:\n%s", name, table.String())
	if misses.Len() > 0 {
		t.Logf("%s misclassified:\n%s", name, misses.String())
	}
	if acc < min {
		t.Errorf("%s: overall accuracy %.1f%%, want at least %.0f%%", name, acc, min)
	}
}

func percent(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// TestCorpus checks the classifier against the main labelled corpus.
func TestCorpus(t *testing.T) {
	checkCorpus(t, "corpus.tsv", 300, 95)
}

// TestHoldout checks the classifier against messages written after the
// rules and never used to tune them: the honest estimate of its accuracy.
func TestHoldout(t *testing.T) {
	checkCorpus(t, "holdout.tsv", 60, 90)
}
