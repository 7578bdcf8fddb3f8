package mirror

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNumstat(t *testing.T) {
	got, err := parseNumstat("3\t1\ta.go\x00-\t-\tlogo.png\x000\t7\tdir/with space\ttab.txt\x00")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileStat{{Path: "a.go", Added: 3, Removed: 1}, {Path: "logo.png", Binary: true}, {Path: "dir/with space\ttab.txt", Removed: 7}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseNumstat (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"x\t1\ta.go\x00", "1\t1\x00", "1\t1\t\x00"} {
		if _, err := parseNumstat(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("parseNumstat(%q): %v, want ErrInvalid", bad, err)
		}
	}
}
