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
