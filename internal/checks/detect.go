package checks

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// detectFiles are the files detection reads, at the top of the worktree.
var detectFiles = []string{"go.mod", "package.json", "pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "conftest.py", "Cargo.toml", "Makefile", "makefile", "GNUmakefile"}

// detectScript prints each of its arguments that is a regular file (not a
// symlink) in the working directory, after a "\x00FILE NAME\n" header,
// cut at maxDetectFile bytes. It is a fixed program: only the file names
// above reach it, as arguments.
const detectScript = `for f in "$@"; do if [ -f "$f" ] && [ ! -L "$f" ]; then printf '\000FILE %s\n' "$f"; head -c 65536 -- "$f"; printf '\n'; fi; done`

// maxDetectFile bounds what is read of one file (detectScript's head -c).
const maxDetectFile = 65536

// maxDetectOut bounds what detection reads in all.
var maxDetectOut = len(detectFiles) * (maxDetectFile + 256)

// splitFiles reads detectScript's output into name → content. The kennel
// wrote the files: a header forged inside one only changes which commands
// are found, which then run in the kennel all the same.
func splitFiles(out []byte) map[string]string {
	files := map[string]string{}
	for _, part := range bytes.Split(out, []byte("\x00FILE ")) {
		name, body, ok := bytes.Cut(part, []byte("\n"))
		if !ok {
			continue
		}
		files[string(name)] = string(body)
	}
	return files
}

// makeTest matches a Makefile's test target.
var makeTest = regexp.MustCompile(`(?m)^test\s*:([^=]|$)`)

// npmDefaultTest is the test script npm init writes, which only fails.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

// detect finds the checks of a worktree from its files, in a fixed
// order; none when nothing is recognised.
func detect(files map[string]string) []string {
	var cmds []string
	if _, ok := files["go.mod"]; ok {
		cmds = append(cmds, "go test ./...")
	}
	if pkg, ok := files["package.json"]; ok {
		var p struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal([]byte(pkg), &p) == nil {
			if s := strings.TrimSpace(p.Scripts["test"]); s != "" && s != npmDefaultTest {
				cmds = append(cmds, "npm test")
			}
		}
	}
	if pytest(files) {
		cmds = append(cmds, "pytest")
	}
	if _, ok := files["Cargo.toml"]; ok {
		cmds = append(cmds, "cargo test")
	}
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if mk, ok := files[name]; ok {
			if makeTest.MatchString(mk) {
				cmds = append(cmds, "make test")
			}
			break // make reads the first of these it finds
		}
	}
	if len(cmds) > MaxCommands {
		cmds = cmds[:MaxCommands]
	}
	return cmds
}

// pytest tells whether the files configure pytest.
func pytest(files map[string]string) bool {
	if _, ok := files["pytest.ini"]; ok {
		return true
	}
	if _, ok := files["conftest.py"]; ok {
		return true
	}
	if strings.Contains(files["pyproject.toml"], "[tool.pytest") {
		return true
	}
	return strings.Contains(files["setup.cfg"], "[tool:pytest]") || strings.Contains(files["tox.ini"], "[pytest]")
}
