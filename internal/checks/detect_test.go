package checks

import (
	"slices"
	"testing"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"nothing", map[string]string{"README.md": "hi"}, nil},
		{"go", map[string]string{"go.mod": "module x\n"}, []string{"go test ./..."}},
		{"npm", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`}, []string{"npm test"}},
		{"npm default script", map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, nil},
		{"npm no script", map[string]string{"package.json": `{"name":"x"}`}, nil},
		{"npm bad json", map[string]string{"package.json": `{"scripts":`}, nil},
		{"pytest ini", map[string]string{"pytest.ini": "[pytest]\n"}, []string{"pytest"}},
		{"pyproject pytest", map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n"}, []string{"pytest"}},
		{"pyproject without pytest", map[string]string{"pyproject.toml": "[project]\nname='x'\n"}, nil},
		{"cargo", map[string]string{"Cargo.toml": "[package]\n"}, []string{"cargo test"}},
		{"make test", map[string]string{"Makefile": "all:\n\tcc x.c\ntest: all\n\t./x\n"}, []string{"make test"}},
		{"make no test", map[string]string{"Makefile": "all:\n\tcc x.c\ntest := 1\n"}, nil},
		{"gnumakefile first", map[string]string{"GNUmakefile": "all:\n", "Makefile": "test:\n"}, nil},
		{"several", map[string]string{"go.mod": "", "Makefile": "test:\n\tgo test\n"}, []string{"go test ./...", "make test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detect(tt.files); !slices.Equal(got, tt.want) {
				t.Errorf("detect = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitFiles(t *testing.T) {
	out := []byte("\x00FILE go.mod\nmodule x\n\n\x00FILE Makefile\ntest:\n\ttrue\n\n")
	got := splitFiles(out)
	if got["go.mod"] != "module x\n\n" || got["Makefile"] != "test:\n\ttrue\n\n" || len(got) != 2 {
		t.Errorf("splitFiles = %q", got)
	}
	for _, line := range detect(got) {
		if _, err := Parse(line); err != nil {
			t.Errorf("a detected command does not parse: %v", err)
		}
	}
}
