package review

import (
	"fmt"
	"path"
	"strings"
)

// Pattern is a path pattern that a changed file may match. Three forms:
// a directory, ending in "/" ("deploy/", ".github/workflows/"), matches
// every file under a directory of that path at any depth; a name without
// "/" ("*.tf", "requirements*.txt", "Dockerfile") matches a file of that
// name in any directory (path.Match syntax); anything else ("db/*.sql")
// matches the whole path from the repository's root (path.Match syntax).
// Matching ignores case: what a case-insensitive checkout would confuse,
// the gate does not tell apart either.
type Pattern string

// maxPattern bounds a pattern's length.
const maxPattern = 200

// ParsePattern checks a pattern as the owner typed it and returns it in
// the form it is kept (no "./" or leading "/", "\" as "/").
func ParsePattern(s string) (Pattern, error) {
	p := strings.TrimSpace(s)
	p = strings.ReplaceAll(p, `\`, "/")
	p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	switch {
	case p == "" || p == "/":
		return "", fmt.Errorf("review: an empty path pattern: %w", ErrBadPattern)
	case len(p) > maxPattern:
		return "", fmt.Errorf("review: a path pattern of more than %d characters: %w", maxPattern, ErrBadPattern)
	case strings.ContainsAny(p, "\x00\n\r\t"):
		return "", fmt.Errorf("review: %q holds a control character: %w", s, ErrBadPattern)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("review: %q has an empty, . or .. segment: %w", s, ErrBadPattern)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "", fmt.Errorf("review: %q is not a pattern (%v): %w", s, err, ErrBadPattern)
		}
	}
	return Pattern(p), nil
}

// Match tells whether file (a slash path from the repository's root)
// matches p.
func (p Pattern) Match(file string) bool {
	pat := strings.ToLower(string(p))
	file = strings.ToLower(strings.TrimPrefix(file, "/"))
	switch {
	case strings.HasSuffix(pat, "/"):
		dir := strings.Split(strings.TrimSuffix(pat, "/"), "/")
		segs := strings.Split(file, "/")
		// Every start among the file's directories (not its name).
		for i := 0; i+len(dir) < len(segs); i++ {
			if matchAll(dir, segs[i:i+len(dir)]) {
				return true
			}
		}
		return false
	case !strings.Contains(pat, "/"):
		ok, _ := path.Match(pat, path.Base(file))
		return ok
	}
	ok, _ := path.Match(pat, file)
	return ok
}

func matchAll(pats, segs []string) bool {
	for i := range pats {
		if ok, _ := path.Match(pats[i], segs[i]); !ok {
			return false
		}
	}
	return true
}

// Class is a kind of path that always needs the owner's Merge.
type Class string

// The built-in classes.
const (
	// CI: what runs in the repository's CI with its secrets.
	CI Class = "a CI workflow"
	// Dependencies: lockfiles and dependency manifests, what the build
	// downloads and runs.
	Dependencies Class = "a lockfile or dependency manifest"
	// Deploy: how the code is built into images and deployed.
	Deploy Class = "a deploy file"
	// Listed: a path the owner listed for the workspace (/automerge add).
	Listed Class = "a path the owner listed"
)

// builtIn are the paths that always need the owner, by class.
var builtIn = []struct {
	class    Class
	patterns []Pattern
}{
	{CI, []Pattern{
		".github/workflows/", ".github/actions/", ".gitlab-ci.yml", ".gitlab/ci/", ".circleci/", "Jenkinsfile",
		"azure-pipelines.yml", ".azure-pipelines/", ".travis.yml", "bitbucket-pipelines.yml", ".buildkite/",
		".drone.yml", "appveyor.yml", ".woodpecker.yml", ".woodpecker/", "cloudbuild.yaml", ".tekton/",
	}},
	{Dependencies, []Pattern{
		"go.mod", "go.sum", "go.work", "go.work.sum", "vendor/modules.txt",
		"package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", ".yarnrc.yml", "pnpm-lock.yaml", "pnpm-workspace.yaml", "bun.lock", "bun.lockb", ".npmrc",
		"Cargo.toml", "Cargo.lock",
		"requirements*.txt", "requirements/", "constraints*.txt", "pyproject.toml", "poetry.lock", "Pipfile", "Pipfile.lock", "uv.lock", "pdm.lock", "setup.py", "setup.cfg",
		"Gemfile", "Gemfile.lock", "*.gemspec",
		"composer.json", "composer.lock",
		"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.lockfile", "gradle-wrapper.properties",
		"mix.exs", "mix.lock", "Package.swift", "Package.resolved", "Podfile", "Podfile.lock", "Cartfile", "Cartfile.resolved",
		"*.csproj", "packages.lock.json", "Directory.Packages.props", "paket.lock",
		"flake.nix", "flake.lock", "pubspec.yaml", "pubspec.lock", "deno.json", "deno.lock",
	}},
	{Deploy, []Pattern{
		"Dockerfile", "Dockerfile.*", "*.dockerfile", "Containerfile", ".dockerignore",
		"docker-compose*.yml", "docker-compose*.yaml", "compose.yml", "compose.yaml", "compose.*.yml", "compose.*.yaml",
		"k8s/", "kubernetes/", "kustomization.yaml", "kustomization.yml", "skaffold.yaml",
		"helm/", "charts/", "Chart.yaml", "helmfile.yaml",
		"terraform/", "*.tf", "*.tfvars", "*.tf.json", ".terraform.lock.hcl", "terragrunt.hcl",
		"Procfile", "fly.toml", "app.yaml", "render.yaml", "vercel.json", "netlify.toml", "serverless.yml", "serverless.yaml",
		"ansible/", "playbook*.yml", "Pulumi.yaml", "Pulumi.*.yaml",
	}},
}

// Classify returns the class of file that always needs the owner: a
// built-in one, or Listed when it matches one of listed; "" for none.
func Classify(file string, listed []Pattern) (Class, Pattern) {
	for _, b := range builtIn {
		for _, p := range b.patterns {
			if p.Match(file) {
				return b.class, p
			}
		}
	}
	for _, p := range listed {
		if p.Match(file) {
			return Listed, p
		}
	}
	return "", ""
}
