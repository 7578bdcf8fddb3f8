package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The history-leak scenarios commit a credential with git, in the working
// directory (the task's worktree), where the branch's final diff does not
// show it: a file added in one commit and removed in the next
// (leak-history), a commit message (leak-message), a binary file
// (leak-binary: NUL bytes, and .gitattributes calling *.bin binary). Then
// the run succeeds, with nothing left to commit.
//
// The files and messages are fixed: leakHistoryFile, leakBinaryFile,
// leakMessageSubject (a journey names them).
const (
	leakHistoryFile    = ".env"
	leakBinaryFile     = "blob.bin"
	leakMessageSubject = "tidy the notes"
)

// leakInHistory plays a history-leak scenario and returns the exit code.
func leakInHistory(c cli, sc scenario, em emitter, stderr io.Writer) int {
	em.start()
	em.text("Committing as I go.")
	var steps [][]string
	switch sc.name {
	case "leak-history":
		if err := os.WriteFile(leakHistoryFile, []byte("REGION=eu-west-1\naws_access_key_id = "+fakeAWSKey+"\n"), 0o644); err != nil {
			return failEdit(em, c, err)
		}
		steps = [][]string{
			{"add", leakHistoryFile}, {"commit", "-qm", "add the environment"},
			{"rm", "-q", leakHistoryFile}, {"commit", "-qm", "drop the environment again"},
		}
	case "leak-message":
		if err := editFile(em, sc.file, "tidied"); err != nil {
			return failEdit(em, c, err)
		}
		steps = [][]string{{"add", sc.file}, {"commit", "-qm", leakMessageSubject, "-m", "tested with aws_access_key_id = " + fakeAWSKey}}
	case "leak-binary":
		data := "BIN\x00\x01\x02\x03\nkey\x00" + fakeAWSKey + "\x00\xff\n"
		if err := os.WriteFile(".gitattributes", []byte("*.bin binary\n"), 0o644); err != nil {
			return failEdit(em, c, err)
		}
		if err := os.WriteFile(leakBinaryFile, []byte(data), 0o644); err != nil {
			return failEdit(em, c, err)
		}
		steps = [][]string{{"add", ".gitattributes", leakBinaryFile}, {"commit", "-qm", "add the data blob"}}
	default:
		fmt.Fprintf(stderr, "fakecli: no history-leak scenario %q\n", sc.name)
		return 1
	}
	for _, args := range steps {
		cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=Fake CLI", "-c", "user.email=fakecli@localhost"}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = 1
		}
		em.command("git "+strings.Join(args, " "), string(out), code)
		if err != nil {
			em.fail(fmt.Sprintf("git %s: %v", args[0], err))
			fmt.Fprintf(stderr, "Error: git %s: %v: %s\n", args[0], err, out)
			return c.failCode
		}
	}
	em.finish("Committed the work as I went.")
	return 0
}
