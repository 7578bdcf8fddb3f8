package redact

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	r, err := New("hunter2-configured")
	if err != nil {
		t.Fatal(err)
	}
	key := "ghp_" + strings.Repeat("aB3dE5fG7h", 3) + "123456"
	text := "first line\nconst token = \"" + key + "\"\nnothing here\npassword: hunter2-configured\n"
	got := r.Find(text)
	for _, f := range got {
		if strings.Contains(f.Rule, key) || strings.Contains(f.Rule, "hunter2") {
			t.Fatalf("a finding holds the secret: %+v", f)
		}
		if f.Line != 2 && f.Line != 4 {
			t.Errorf("finding on line %d: %+v", f.Line, f)
		}
	}
	if len(got) < 2 || got[0].Line != 2 || got[len(got)-1].Line != 4 || got[len(got)-1].Rule != ConfiguredRule {
		t.Fatalf("Find = %+v", got)
	}
	if got := r.Find("just words\nand more words\n"); len(got) != 0 {
		t.Fatalf("Find in plain text = %+v", got)
	}
}
