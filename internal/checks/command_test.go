package checks

import (
	"errors"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	ok := map[string][]string{
		"go test ./...":                         {"go", "test", "./..."},
		"  npm   test ":                         {"npm", "test"},
		"sh ./test.sh":                          {"sh", "./test.sh"},
		`sh -c 'go vet ./... && go test ./...'`: {"sh", "-c", "go vet ./... && go test ./..."},
		`pytest -k "not slow"`:                  {"pytest", "-k", "not slow"},
		`make test\ all`:                        {"make", "test all"},
		"env CGO_ENABLED=0 go test ./...":       {"env", "CGO_ENABLED=0", "go", "test", "./..."},
		"ls *.go":                               {"ls", "*.go"},
	}
	for line, want := range ok {
		got, err := Parse(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", line, got, err, want)
		}
		if again, err := Parse(Quote(got)); err != nil || !slices.Equal(again, want) {
			t.Errorf("Parse(Quote(%q)) = %q, %v", got, again, err)
		}
	}
	bad := []string{
		"", "   ", "go test && rm -rf /", "go test; echo", "go test | tee x", "go test > out",
		"echo $HOME", "echo $(id)", "echo `id`", "FOO=1 go test", "go test &", "! go test",
		"cat ~/.ssh/id_rsa", `echo "$X"`, "go test\nrm -rf /", "if true; then echo; fi", "(go test)",
		"go test 'unterminated", `echo $'\x41'`,
	}
	for _, line := range bad {
		if got, err := Parse(line); !errors.Is(err, ErrCommand) {
			t.Errorf("Parse(%q) = %q, %v; want ErrCommand", line, got, err)
		}
	}
}
