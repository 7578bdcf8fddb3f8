package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/redact"
)

func TestFindInPatch(t *testing.T) {
	patch := `diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -3,0 +4,2 @@ context
+fine
+SECRET here
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-SECRET removed
diff --git a/dir/b.go b/dir/b.go
new file mode 100644
--- /dev/null
+++ b/dir/b.go
@@ -0,0 +1,3 @@
+package b
+
+const k = "SECRET"
@@ -10 +12 @@
+x := SECRET
`
	// A fake finder: one finding per line holding SECRET.
	find := func(text string) []redact.Finding {
		var out []redact.Finding
		for i, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "SECRET") {
				out = append(out, redact.Finding{Rule: "fake", Line: i + 1})
			}
		}
		return out
	}
	want := []redact.PatchFinding{
		{Path: "a.txt", Line: 5, Rule: "fake"},
		{Path: "dir/b.go", Line: 3, Rule: "fake"},
		{Path: "dir/b.go", Line: 12, Rule: "fake"},
	}
	if diff := cmp.Diff(want, redact.FindInPatch(find, patch)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if got := redact.FindInPatch(find, ""); len(got) != 0 {
		t.Errorf("empty patch: %v", got)
	}
}

// A patch with context lines (git diff's default) maps findings to the
// right line, and an added line that looks like a file header is content.
func TestFindInPatchWithContext(t *testing.T) {
	patch := "diff --git a/c.ini b/c.ini\n--- a/c.ini\n+++ b/c.ini\n@@ -1,4 +1,6 @@\n one\n two\n-old\n+++ SECRET here\n three\n+SECRET again\n four\n"
	find := func(s string) []redact.Finding {
		var out []redact.Finding
		for i, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "SECRET") {
				out = append(out, redact.Finding{Rule: "test", Line: i + 1})
			}
		}
		return out
	}
	got := redact.FindInPatch(find, patch)
	want := []redact.PatchFinding{{Path: "c.ini", Line: 3, Rule: "test"}, {Path: "c.ini", Line: 5, Rule: "test"}}
	if !cmp.Equal(got, want) {
		t.Fatalf("findings %+v; want %+v", got, want)
	}
}
