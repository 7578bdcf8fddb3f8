package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/mirror"
	"github.com/fetch-dev/fetch/internal/redact"
)

// scanKey is an AWS access key id of the shape gitleaks' rule finds.
const scanKey = "AKIAZ3MHQ4XJ7KW2PLNB"

// noKey fails when a finding, as a value or as the owner reads it, holds
// the key or a good part of it.
func noKey(t testing.TB, found []mirror.Finding) {
	t.Helper()
	for _, f := range found {
		for _, s := range []string{fmt.Sprintf("%+v", f), f.String(), redact.DescribeFindings(found, 10)} {
			if strings.Contains(s, scanKey[4:12]) {
				t.Errorf("a finding holds the key: %s", s)
			}
		}
	}
}

func TestScan(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	main := e.mustImport(e.ref("main", ""))
	e.sh(`git checkout -q -b fetch/t1 && printf '[default]\nregion = eu-west-1\naws_access_key_id = ` + scanKey + `\n' > creds.ini && echo fine >> a.txt && git add . && git commit -qm creds`)
	tip := e.mustImport(e.ref("fetch/t1", main))
	found, err := e.m.Scan(ctx, e.name, main, "refs/heads/fetch/t1")
	if err != nil {
		t.Fatal(err)
	}
	want := []mirror.Finding{{Commit: tip[:12], Path: "creds.ini", Line: 3, Rule: "aws-access-token"}}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	noKey(t, found)
	// Removing the secret adds none.
	e.sh(`git rm -q creds.ini && git commit -qm "no creds"`)
	e.mustImport(e.ref("fetch/t1", main))
	if found, err := e.m.Scan(ctx, e.name, tip, "refs/heads/fetch/t1"); err != nil || len(found) != 0 {
		t.Errorf("scan of a removal: %v, %v", found, err)
	}
}

// TestScanEveryCommit: a secret that the range's whole diff does not show
// is found in the commit that holds it — one of a file added and removed
// again, in a commit message, in a binary file (gitattributes saying so
// too), in the author's email or the committer's name, in what a merge
// adds, in a root commit — by Staged.Scan before anything lands, and by
// Scan once it has.
func TestScanEveryCommit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	main := e.mustImport(e.ref("main", ""))
	k := scanKey
	tests := []struct {
		name   string
		script string
		// at are the commits holding the secret, relative to the branch's
		// tip, in the log's order.
		at   []string
		want mirror.Finding
	}{{
		name:   "added then removed",
		script: `printf 'A=1\naws_access_key_id = ` + k + `\n' > .env && git add .env && git commit -qm "env" && git rm -q .env && git commit -qm "no env"`,
		at:     []string{"HEAD~1"},
		want:   mirror.Finding{Path: ".env", Line: 2, Rule: "aws-access-token"},
	}, {
		name:   "commit message",
		script: `echo x >> a.txt && git commit -qam "tidy" -m "used aws_access_key_id = ` + k + ` to test"`,
		at:     []string{"HEAD"},
		want:   mirror.Finding{In: redact.InMessage, Line: 3, Rule: "aws-access-token"},
	}, {
		name: "binary file",
		script: `printf '*.bin binary -diff -text\n' > .gitattributes && printf 'BIN\000\001\002\nkey\000` + k + `\000\n' > blob.bin && ` +
			`git add .gitattributes blob.bin && git commit -qm "data"`,
		at:   []string{"HEAD"},
		want: mirror.Finding{Path: "blob.bin", Line: 2, Rule: "aws-access-token"},
	}, {
		name:   "author email",
		script: `echo y >> a.txt && GIT_AUTHOR_EMAIL=` + k + `@example.com git commit -qam "by whom"`,
		at:     []string{"HEAD"},
		want:   mirror.Finding{In: redact.InAuthor, Rule: "aws-access-token"},
	}, {
		name:   "committer name",
		script: `echo z >> a.txt && GIT_COMMITTER_NAME=` + k + ` git commit -qam "committed by whom"`,
		at:     []string{"HEAD"},
		want:   mirror.Finding{In: redact.InCommitter, Rule: "aws-access-token"},
	}, {
		name: "what a merge adds",
		script: `git checkout -q -b side-merge && echo s > s.txt && git add s.txt && git commit -qm side && git checkout -q fetch/scan5 && ` +
			`echo m > m.txt && git add m.txt && git commit -qm mine && git merge -q --no-commit side-merge && ` +
			`printf 'aws_access_key_id = ` + k + `\n' > evil.ini && git add evil.ini && git commit -qm "merge side"`,
		at:   []string{"HEAD"},
		want: mirror.Finding{Path: "evil.ini", Line: 1, Rule: "aws-access-token"},
	}, {
		name:   "a root commit",
		script: `git checkout -q --orphan orphan-root && git rm -rqf . && printf 'aws_access_key_id = ` + k + `\n' > root.ini && git add root.ini && git commit -qm root && git checkout -q fetch/scan6 && git merge -q --allow-unrelated-histories -m join orphan-root && git rm -q root.ini && git commit -qm tidy`,
		// The merge adds it over its first parent too.
		at:   []string{"HEAD~1^2", "HEAD~1"},
		want: mirror.Finding{Path: "root.ini", Line: 1, Rule: "aws-access-token"},
	}}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			branch := fmt.Sprintf("fetch/scan%d", i)
			e.sh(`git checkout -q -b ` + branch + ` main && ` + tt.script)
			tip := e.kennelRev("HEAD")
			var want []mirror.Finding
			for _, at := range tt.at {
				f := tt.want
				f.Commit = e.kennelRev(at)[:12]
				want = append(want, f)
			}

			// The range's diff does not show it, or not where it is.
			if tt.name == "added then removed" {
				if diff := e.sh(`git diff main HEAD`); diff != "" {
					t.Fatalf("the range's diff is not empty: %q", diff)
				}
			}

			// Staged: found before the branch is in the mirror.
			r := e.ref(branch, main)
			s, _, err := e.m.StageImport(ctx, r)
			if err != nil {
				t.Fatalf("stage: %v", err)
			}
			found, err := s.Scan(ctx)
			s.Drop()
			if err != nil {
				t.Fatalf("staged scan: %v", err)
			}
			if diff := cmp.Diff(want, found); diff != "" {
				t.Errorf("staged findings (-want +got):\n%s", diff)
			}
			noKey(t, found)
			if got := e.mirrorRev("refs/heads/" + branch); got != "" {
				t.Errorf("the branch is in the mirror after a staged scan: %s", got)
			}

			// Landed: the same findings.
			if got := e.mustImport(r); got != tip {
				t.Fatalf("imported %s, want %s", got, tip)
			}
			found, err = e.m.Scan(ctx, e.name, main, "refs/heads/"+branch)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if diff := cmp.Diff(want, found); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScanOverTheBoundFailsClosed: patches or commit objects over
// Config.MaxScan are not scanned in part: no findings and an error
// wrapping ErrScanIncomplete, even when the secret is in the part that
// would have been read.
func TestScanOverTheBoundFailsClosed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	secrets, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	small, err := mirror.New(mirror.Config{Root: e.root, Kennel: e.k, Secrets: secrets, MaxScan: 4 << 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	main := e.mustImport(e.ref("main", ""))
	e.sh(`git checkout -q -b fetch/big main && printf 'aws_access_key_id = ` + scanKey + `\n' > big.txt && seq 1 2000 >> big.txt && git add big.txt && git commit -qm big`)
	e.sh(`git checkout -q -b fetch/long main && echo l >> a.txt && git commit -qam "long" -m "$(seq 1 2000)"`)
	for _, branch := range []string{"fetch/big", "fetch/long"} {
		r := e.ref(branch, main)
		s, _, err := small.StageImport(ctx, r)
		if err != nil {
			t.Fatalf("stage %s: %v", branch, err)
		}
		found, err := s.Scan(ctx)
		s.Drop()
		if !errors.Is(err, mirror.ErrScanIncomplete) || !errors.Is(err, mirror.ErrTooLarge) || found != nil {
			t.Errorf("staged scan of %s: %v, %v; want ErrScanIncomplete and no findings", branch, found, err)
		}
		e.mustImport(r)
		found, err = small.Scan(ctx, e.name, main, "refs/heads/"+branch)
		if !errors.Is(err, mirror.ErrScanIncomplete) || found != nil {
			t.Errorf("scan of %s: %v, %v; want ErrScanIncomplete and no findings", branch, found, err)
		}
		// Within the default bound it is scanned whole.
		if _, err := e.m.Scan(ctx, e.name, main, "refs/heads/"+branch); err != nil {
			t.Errorf("scan of %s within the bound: %v", branch, err)
		}
	}
}
