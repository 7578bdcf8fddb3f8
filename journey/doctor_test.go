package journey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/fetch-dev/fetch/internal/testkit"
	"github.com/fetch-dev/fetch/kennel"
)

// doctorCheck is one check of fetch doctor --json.
type doctorCheck struct {
	Name, Status, Detail, Fix string
}

// doctorEnv is a healthy setup on the fakes and the real kennel image with
// the scripted CLIs: every check of fetch doctor passes.
func doctorEnv(t *testing.T) map[string]string {
	t.Helper()
	testkit.RequireDocker(t)
	fetchBinary(t)
	d := testkit.NewDiscord(t, testToken)
	llm := testkit.NewOpenRouter(t)
	// Closed to everyone but Fetch, as Fetch makes it: the kennel's user
	// gets its workspaces through the engine's mounts, not this path.
	data := t.TempDir()
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                data,
		"FETCH_DATA_DIR":      data,
		"FETCH_DISCORD_TOKEN": testToken,
		"FETCH_DISCORD_URL":   d.URL(),
		"OPENROUTER_API_KEY":  testkit.OpenRouterKey,
		"FETCH_LLM_URL":       llm.URL(),
		"FETCH_KENNEL_IMAGE":  harnessImage(t),
		"FETCH_HARNESS":       "claude",
		"ANTHROPIC_API_KEY":   "sk-ant-doctor-test-0123456789",
		"FETCH_TIMEZONE":      "UTC",
		// fetch chat serves the task page too; journeys run side by
		// side, and its default port is one.
		"FETCH_PAGE_ADDR": "off",
	}
	for _, k := range []string{"DOCKER_HOST", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

// runDoctor runs fetch doctor with exactly env; wrap, when not nil, turns
// the command line into another that runs it.
func runDoctor(t *testing.T, env map[string]string, wrap func([]string) []string, args ...string) (int, string, string) {
	t.Helper()
	argv := append([]string{fetchBinary(t), "doctor"}, args...)
	if wrap != nil {
		argv = wrap(argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run fetch doctor: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// doctorJSON runs fetch doctor --json and decodes its report.
func doctorJSON(t *testing.T, env map[string]string, wrap func([]string) []string) (int, bool, []doctorCheck) {
	t.Helper()
	code, out, errs := runDoctor(t, env, wrap, "--json")
	var rep struct {
		OK     bool
		Checks []doctorCheck
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("fetch doctor --json: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	}
	return code, rep.OK, rep.Checks
}

// TestDoctorHealthy: on the fakes and the real kennel image every check is
// ok, exit 0; the text has one line per check; no probe container is left.
func TestDoctorHealthy(t *testing.T) {
	env := doctorEnv(t)
	code, ok, checks := doctorJSON(t, env, nil)
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		// The image holds every CLI; only claude's key is given: the
		// others' keys are missing, which is a warning. So is each
		// installed CLI that runs one-shot only (aider, cursor): its
		// permissions are bypassed.
		otherKey := strings.HasPrefix(c.Name, "key ") && c.Name != "key claude" && c.Status == "warn"
		oneShot := (c.Name == "permissions aider" || c.Name == "permissions cursor") && c.Status == "warn" && strings.Contains(c.Detail, "the kennel is the boundary")
		if c.Status != "ok" && !otherKey && !oneShot {
			t.Errorf("%s: %s %s (fix: %s)", c.Name, c.Status, c.Detail, c.Fix)
		}
	}
	if code != 0 || !ok {
		t.Errorf("exit %d, ok %v; want 0, true", code, ok)
	}
	for _, want := range []string{"config", "engine local", "image", "data dir", "kennel hardening", "cli claude", "workspaces", "key claude", "database", "disk", "discord", "openrouter", "timezone", "egress"} {
		if !slices.Contains(names, want) {
			t.Errorf("no check %q in %v", want, names)
		}
	}
	for _, c := range checks {
		switch c.Name {
		case "kennel hardening":
			for _, want := range []string{"uid 10001", "no capabilities", "read-only root", "no Docker socket", "pids 1024"} {
				if !strings.Contains(c.Detail, want) {
					t.Errorf("hardening %q lacks %q", c.Detail, want)
				}
			}
		case "cli claude":
			if !strings.Contains(c.Detail, "/usr/local/bin/claude") || !strings.Contains(c.Detail, "claude (fakecli)") {
				t.Errorf("cli claude: %q", c.Detail)
			}
		case "discord":
			if !strings.Contains(c.Detail, "bot ") {
				t.Errorf("discord: %q", c.Detail)
			}
		}
	}

	code, out, _ := runDoctor(t, env, nil)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != len(checks)+1 || !strings.HasPrefix(lines[0], "ok    config") || !strings.HasSuffix(lines[len(lines)-1], " 0 fail") {
		t.Errorf("text report (exit %d):\n%s", code, out)
	}
	list, err := testkit.RequireDocker(t).ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", kennel.LabelInstance+"=fetch-doctor"))})
	if err != nil || len(list) != 0 {
		t.Errorf("probe containers left: %d (%v)", len(list), err)
	}
	if entries, _ := os.ReadDir(filepath.Join(env["FETCH_DATA_DIR"], "workspaces")); len(entries) != 0 {
		t.Errorf("scratch workspaces left: %v", entries)
	}
}

// TestDoctorFaults injects one fault at a time: each makes exactly one
// check fail, with what to do, and the exit code 1.
func TestDoctorFaults(t *testing.T) {
	faults := []struct {
		name  string
		check string // the check that must fail
		want  string // in its detail
		setup func(t *testing.T, env map[string]string) func([]string) []string
	}{
		{"engine unreachable", "engine local", "nonexistent.sock", func(t *testing.T, env map[string]string) func([]string) []string {
			env["DOCKER_HOST"] = "unix:///nonexistent.sock"
			return nil
		}},
		{"remote engine unreachable", "engine far", "unreachable", func(t *testing.T, env map[string]string) func([]string) []string {
			sock := filepath.Join(t.TempDir(), "docker.sock")
			if err := os.WriteFile(sock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			env["FETCH_ENGINES"] = "local,far=unix://" + sock
			return nil
		}},
		{"image missing", "image", "fetch-kennel-none:x is not on the engine", func(t *testing.T, env map[string]string) func([]string) []string {
			env["FETCH_KENNEL_IMAGE"] = "fetch-kennel-none:x"
			return nil
		}},
		{"CLI missing from the image", "cli claude", "claude (FETCH_HARNESS) is not in the image", func(t *testing.T, env map[string]string) func([]string) []string {
			env["FETCH_KENNEL_IMAGE"] = testkit.KennelImage(t)
			return nil
		}},
		{"bad Discord token", "discord", "Discord refused FETCH_DISCORD_TOKEN", func(t *testing.T, env map[string]string) func([]string) []string {
			env["FETCH_DISCORD_TOKEN"] = "MTAwMDAwMDAwMDAwMDAwMDAx.GhJkLm.not-the-fake-bot-token-000000000000"
			return nil
		}},
		{"bad OpenRouter key", "openrouter", "refused OPENROUTER_API_KEY", func(t *testing.T, env map[string]string) func([]string) []string {
			env["OPENROUTER_API_KEY"] = "sk-or-wrong-0123456789abcdef"
			return nil
		}},
		{"CLI key missing", "key claude", "none of ANTHROPIC_API_KEY", func(t *testing.T, env map[string]string) func([]string) []string {
			delete(env, "ANTHROPIC_API_KEY")
			return nil
		}},
		{"workspaces unusable by the kennel's user", "workspaces", "the Docker engine does not see", func(t *testing.T, env map[string]string) func([]string) []string {
			// Fetch sees its workspaces folder, the engine (which mounts
			// it into kennels) does not: what happens when Fetch runs in a
			// container without the folder mounted at the same path. A
			// tmpfs over the folder, in a mount namespace of fetch's own.
			ws := filepath.Join(env["FETCH_DATA_DIR"], "workspaces")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("unshare", "--mount", "mount", "-t", "tmpfs", "tmpfs", ws).CombinedOutput(); err != nil {
				t.Skipf("needs unshare and mount (root with CAP_SYS_ADMIN): %v: %s", err, out)
			}
			return func(argv []string) []string {
				return append([]string{"unshare", "--mount", "sh", "-c", `mount -t tmpfs tmpfs "$1" && shift && exec "$@"`, "sh", ws}, argv...)
			}
		}},
		{"data directory read-only", "data dir", "read-only file system", func(t *testing.T, env map[string]string) func([]string) []string {
			// A read-only bind mount of the data directory, in a mount
			// namespace of fetch's own: writes fail with EROFS even for
			// root. The workspaces folder is elsewhere, writable.
			data := env["FETCH_DATA_DIR"]
			ro := filepath.Join(data, "ro")
			if err := os.Mkdir(ro, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("unshare", "--mount", "sh", "-c", `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"`, "sh", ro).CombinedOutput(); err != nil {
				t.Skipf("needs unshare and mount (root with CAP_SYS_ADMIN) to make a read-only directory: %v: %s", err, out)
			}
			env["FETCH_DATA_DIR"] = ro
			env["FETCH_WORKSPACES"] = filepath.Join(data, "workspaces")
			return func(argv []string) []string {
				return append([]string{"unshare", "--mount", "sh", "-c", `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`, "sh", ro}, argv...)
			}
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			env := doctorEnv(t)
			wrap := f.setup(t, env)
			code, ok, checks := doctorJSON(t, env, wrap)
			var failed []doctorCheck
			for _, c := range checks {
				if c.Status == "fail" {
					failed = append(failed, c)
				}
			}
			if code != 1 || ok || len(failed) != 1 || failed[0].Name != f.check || !strings.Contains(failed[0].Detail, f.want) || failed[0].Fix == "" {
				t.Fatalf("exit %d, ok %v, failed %+v; want exit 1 and only %q failing with %q and a fix", code, ok, failed, f.check, f.want)
			}
			code, out, _ := runDoctor(t, env, wrap)
			var line string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "fail") {
					line = l
				}
			}
			if code != 1 || !strings.Contains(line, f.check) || !strings.Contains(line, "— fix: ") || !strings.Contains(out, "1 fail") {
				t.Errorf("text report (exit %d), fail line %q:\n%s", code, line, out)
			}
			if strings.Contains(out, env["FETCH_DISCORD_TOKEN"]) || strings.Contains(out, env["OPENROUTER_API_KEY"]) {
				t.Errorf("a secret in the report:\n%s", out)
			}
			t.Logf("%s", line)
		})
	}
}

// TestDoctorAtStart: fetch chat says what is missing in one message before
// it answers, and still works.
func TestDoctorAtStart(t *testing.T) {
	env := doctorEnv(t)
	env["FETCH_KENNEL_IMAGE"] = "fetch-kennel-none:x"
	delete(env, "ANTHROPIC_API_KEY")
	cmd := exec.Command(fetchBinary(t), "chat")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader("/help\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fetch chat: %v\n%s", err, stderr.String())
	}
	errs := stderr.String()
	if strings.Count(errs, "Not everything Fetch needs is ready") != 1 || !strings.Contains(errs, "image: fetch-kennel-none:x is not on the engine") ||
		!strings.Contains(errs, "key claude: none of ANTHROPIC_API_KEY") || !strings.Contains(errs, `Run "fetch doctor"`) {
		t.Errorf("stderr:\n%s", errs)
	}
	if stdout.Len() == 0 {
		t.Errorf("fetch chat answered nothing")
	}
}

// TestDoctorWarnsOfPlantedGit: a workspace whose .git holds a hook and a
// core.fsmonitor that a coding CLI could have planted draws a warning
// naming them (not their programs) and how to take the work instead;
// fetch doctor reads the .git without running git there, so neither
// planted program runs.
func TestDoctorWarnsOfPlantedGit(t *testing.T) {
	env := doctorEnv(t)
	ws := filepath.Join(env["FETCH_DATA_DIR"], "workspaces", "api")
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	marks := t.TempDir()
	program := func(name string) string {
		p := filepath.Join(ws, ".git", name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\ntouch "+filepath.Join(marks, name)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.Rename(program("pre-commit"), filepath.Join(ws, ".git", "hooks", "pre-commit")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ws, "config", "core.fsmonitor", program("fsmonitor")).CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	_, _, checks := doctorJSON(t, env, nil)
	var found *doctorCheck
	for i, c := range checks {
		if c.Name == "workspace api" {
			found = &checks[i]
		}
	}
	if found == nil || found.Status != "warn" || !strings.Contains(found.Detail, "hook pre-commit") || !strings.Contains(found.Detail, "core.fsmonitor") ||
		strings.Contains(found.Detail, marks) || !strings.Contains(found.Fix, "git fetch "+filepath.Join(env["FETCH_DATA_DIR"], "repos", "api.git")+" fetch/ID") {
		t.Fatalf("workspace api check %+v in %+v", found, checks)
	}
	if ran := markers(t, marks); len(ran) != 0 {
		t.Fatalf("planted programs ran: %v", ran)
	}
}
