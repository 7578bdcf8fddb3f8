package agent

import (
	"log/slog"
	"strings"
	"testing"
)

func registered(t testing.TB) *Agent {
	t.Helper()
	a := &Agent{log: slog.New(slog.DiscardHandler)}
	if err := a.register(); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDecodeArguments(t *testing.T) {
	a := registered(t)
	for _, tc := range []struct {
		tool, args string
		err        string // "" when valid
		canon      string
	}{
		{"workspace_list", "", "", "{}"},
		{"workspace_list", "{}", "", "{}"},
		{"workspace_list", " {} ", "", "{}"},
		{"workspace_list", "\t\t\t", "only whitespace", ""},
		{"workspace_list", "null", "not a JSON object", ""},
		{"workspace_list", `{"x":1}`, `unknown field "x"; it takes no fields`, ""},
		{"workspace_select", `{"name":"demo","nme":"x"}`, `unknown field "nme"; the fields are "name"`, ""},
		{"workspace_select", `{"name":"  demo "}`, "", `{"name":"demo"}`},
		{"workspace_select", `{"name":"   "}`, `field "name": must not be empty`, ""},
		{"workspace_select", `{"name":null}`, `missing required field "name"`, ""},
		{"workspace_select", `{"name":42}`, `field "name": want a string, got number`, ""},
		{"task_create", `{"goal":"x","queue":"yes"}`, `field "queue": want true or false, got string`, ""},
		{"code_search", `{"pattern":"x","globs":"*.go"}`, `field "globs": want an array of strings, got string`, ""},
		{"code_read", `{"path":"a.go","from":"1"}`, `field "from": want an integer, got string`, ""},
		{"task_create", `{"goal":"x","queue":true}`, "", `{"goal":"x","queue":true}`},
		{"task_create", `{"workspace":"demo"}`, `missing required field "goal"`, ""},
		{"task_respond", `{}`, `missing required fields "id", "answer"`, ""},
		{"task_respond", `[]`, `not a JSON object (json: cannot unmarshal array`, ""},
		{"task_respond", `[]`, `send one, e.g. {"id": …, "answer": …}`, ""},
	} {
		p, err := a.tools[tc.tool].decode(tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s(%q): %v", tc.tool, tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s(%q): err %v; want %q", tc.tool, tc.args, err, tc.err)
		case tc.err == "" && p.args != tc.canon:
			t.Errorf("%s(%q): canonical %s; want %s", tc.tool, tc.args, p.args, tc.canon)
		}
	}
}

func TestSchemasComeFromTheArgumentTypes(t *testing.T) {
	a := registered(t)
	s := a.tools["task_create"].schema
	if s.Type != "object" || len(s.Required) != 1 || s.Required[0] != "goal" || s.Properties["queue"].Type != "boolean" || s.Properties["goal"].Description == "" {
		t.Fatalf("task_create schema %+v", s)
	}
	if s := a.tools["workspace_list"].schema; len(s.Properties) != 0 || len(s.Required) != 0 {
		t.Fatalf("workspace_list schema %+v", s)
	}
	for name, tl := range a.tools {
		if tl.desc == "" {
			t.Errorf("%s has no description", name)
		}
	}
}

func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{"", "{}", "\t", `{"name":"demo"}`, `{"goal":"x"}`, `[`, `{"a":{"b":[1,2]}}`, "\x00", `{"name":"\u0000"}`} {
		f.Add(s)
	}
	a := registered(f)
	f.Fuzz(func(t *testing.T, raw string) {
		for name, tl := range a.tools {
			p, err := tl.decode(raw)
			if err == nil && resendable(p.args) != p.args {
				t.Fatalf("%s(%q): canonical arguments %q are not resendable", name, raw, p.args)
			}
			if got := resendable(raw); !strings.HasPrefix(got, "{") {
				t.Fatalf("resendable(%q) = %q", raw, got)
			}
		}
	})
}

func BenchmarkDecodeArguments(b *testing.B) {
	a := registered(b)
	tc := a.tools["task_create"]
	raw := `{"goal":"Add a GET /health endpoint that returns 200 and a test for it","workspace":"api","harness":"claude"}`
	for b.Loop() {
		if _, err := tc.decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}
