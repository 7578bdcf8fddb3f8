package journey

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// S8: a secret the branch's diff does not show — in a file the coding CLI
// committed and removed again, in a commit message, in a binary file — is
// found all the same: each task needs attention naming the commit, the
// place and the rule (never the key), its branch is not in Fetch's own
// repository, the key is in none of its objects, and GitHub has no branch
// of it.
func TestJourneySecretInTheHistoryBlocksThePush(t *testing.T) {
	t.Parallel()
	w := newShipWorld(t, nil)
	w.start()
	const key = "AKIAQZ7XW2M4K6PBVN3T" // the scripted CLI's fake AWS key
	repo := filepath.Join(w.data, "repos", "app.git")
	for _, tc := range []struct{ scenario, place string }{
		{"leak-history", `\.env:2`},
		{"leak-message", `commit message, line 3`},
		{"leak-binary", `blob\.bin:2`},
	} {
		m, status := w.startTask(ownerID, "tidy the app ("+tc.scenario+")", "tidy the app [scenario:"+tc.scenario+"]", "app")
		id := taskID(t, status.Text)
		res := w.awaitResult(m, regexp.MustCompile(`⚠️ Task `+id+` on app needs your attention`), "the result of the "+tc.scenario+" task")
		if !regexp.MustCompile(`commit [0-9a-f]{12}: ` + tc.place + ` \(aws-access-token\)`).MatchString(res.Text) {
			t.Errorf("%s: the result does not name the commit, place and rule: %q", tc.scenario, res.Text)
		}
		if strings.Contains(res.Text, key[4:]) {
			t.Errorf("%s: the result shows the key: %q", tc.scenario, res.Text)
		}
		if out, err := fetchsGit(repo, "rev-parse", "--verify", "-q", "refs/heads/fetch/"+id); err == nil {
			t.Errorf("%s: the branch fetch/%s is in Fetch's repository at %s", tc.scenario, id, out)
		}
		if out, err := fetchsGit(repo, "cat-file", "--batch-all-objects", "--batch"); err != nil {
			t.Errorf("%s: read Fetch's repository: %v\n%s", tc.scenario, err, out)
		} else if strings.Contains(out, key) {
			t.Errorf("%s: Fetch's repository holds the key", tc.scenario)
		}
		if b := w.gh.Branches(shipRepo); len(b) != 1 {
			t.Errorf("%s: branches on GitHub: %v; want only main", tc.scenario, b)
		}
	}
}

// fetchsGit runs git on Fetch's own repository of a workspace (a bare
// repository only Fetch writes), with no configuration but its own.
func fetchsGit(gitDir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
