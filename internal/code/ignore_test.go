package code

import "testing"

func TestIgnore(t *testing.T) {
	var ig ignorer
	ig.add("", []byte("# comment\n*.log\n/build/\nnode_modules\n!keep.log\ndocs/**/*.tmp\n"))
	ig.add("sub", []byte("secret.txt\n"))
	for _, c := range []struct {
		path string
		dir  bool
		want bool
	}{
		{"a.log", false, true},
		{"x/y/a.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build", false, false},
		{"x/build", true, false},
		{"x/node_modules", true, true},
		{"docs/a/b/c.tmp", false, true},
		{"docs/c.tmp", false, true},
		{"sub/secret.txt", false, true},
		{"secret.txt", false, false},
		{"main.go", false, false},
	} {
		if got := ig.ignored(c.path, c.dir); got != c.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}
