package redact_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fetch-dev/fetch/internal/redact"
)

// fakeFind finds one "fake" secret per line holding SECRET.
func fakeFind(text string) []redact.Finding {
	var out []redact.Finding
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "SECRET") {
			out = append(out, redact.Finding{Rule: "fake", Line: i + 1})
		}
	}
	return out
}

func TestFindInCommit(t *testing.T) {
	tests := []struct {
		name, object string
		want         []redact.PatchFinding
	}{{
		name:   "clean",
		object: "tree 1111\nparent 2222\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\nsubject\n\nbody\n",
	}, {
		name: "everywhere",
		object: "tree SECRET\nparent SECRET\nauthor A <SECRET@x> 1 +0000\ncommitter SECRET <c@x> 1 +0000\n" +
			"x-extra one\n SECRET continued\n\nsubject\n\nbody SECRET\x00 and SECRET after a NUL\n",
		want: []redact.PatchFinding{
			{Commit: "abc", In: redact.InAuthor, Rule: "fake"},
			{Commit: "abc", In: redact.InCommitter, Rule: "fake"},
			{Commit: "abc", In: redact.InHeader, Line: 6, Rule: "fake"},
			{Commit: "abc", In: redact.InMessage, Line: 3, Rule: "fake"},
		},
	}, {
		name:   "no message",
		object: "tree 1111\nauthor SECRET <a@x> 1 +0000",
		want:   []redact.PatchFinding{{Commit: "abc", In: redact.InAuthor, Rule: "fake"}},
	}, {
		name:   "message's first line",
		object: "tree 1111\n\nSECRET",
		want:   []redact.PatchFinding{{Commit: "abc", In: redact.InMessage, Line: 1, Rule: "fake"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, redact.FindInCommit(fakeFind, "abc", tt.object)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// A real rule finds a key past a NUL in a message; the finding does not
// hold it.
func TestFindInCommitWithRules(t *testing.T) {
	r, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	key := "AKIAQZ7XW2M4K6PBVN3T"
	found := redact.FindInCommit(r.Find, "abc", "tree 1\nauthor A <a@x> 1 +0000\n\nfix\n\x00\x01"+key+"\n")
	want := []redact.PatchFinding{{Commit: "abc", In: redact.InMessage, Line: 2, Rule: "aws-access-token"}}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if s := redact.DescribeFindings(found, 10); strings.Contains(s, key) {
		t.Errorf("described with the key: %q", s)
	}
}

func TestDescribeFindings(t *testing.T) {
	fs := []redact.PatchFinding{
		{Path: "a.txt", Line: 3, Rule: "r1"},
		{Commit: "1a2b3c4d5e6f", Path: ".env", Line: 1, Rule: "r2"},
		{Commit: "1a2b3c4d5e6f", In: redact.InMessage, Line: 2, Rule: "r3"},
		{Commit: "1a2b3c4d5e6f", In: redact.InAuthor, Rule: "r4"},
		{Commit: "1a2b3c4d5e6f", In: redact.InHeader, Line: 5, Rule: "r5"},
	}
	want := "a.txt:3 (r1); commit 1a2b3c4d5e6f: .env:1 (r2); commit 1a2b3c4d5e6f: commit message, line 2 (r3); " +
		"commit 1a2b3c4d5e6f: author (r4) and 1 more"
	if got := redact.DescribeFindings(fs, 4); got != want {
		t.Errorf("DescribeFindings = %q\nwant %q", got, want)
	}
	if got := fs[4].String(); got != "commit 1a2b3c4d5e6f: commit header, line 5 (r5)" {
		t.Errorf("String = %q", got)
	}
}
