package policy

// buildCommands are the test and build commands of each project type (as
// internal/workspace names them from the files at the top of the tree).
// Under the cautious level they run without asking, with any arguments
// except those that run another program (-exec, -toolexec) or name a path
// outside the worktree. They run the workspace's own code (tests, build
// scripts, Makefile targets) inside the kennel: that is what a task is for.
var buildCommands = map[string][]string{
	"go":     {"go test", "go build", "go vet", "go fmt", "gofmt"},
	"node":   {"npm test", "npm run test", "npm run build", "npm run lint", "yarn test", "yarn build", "yarn lint", "pnpm test", "pnpm build", "pnpm run test", "pnpm run build", "pnpm lint"},
	"python": {"pytest", "python -m pytest", "python3 -m pytest", "python -m unittest", "python3 -m unittest", "ruff check"},
	"rust":   {"cargo test", "cargo build", "cargo check", "cargo clippy", "cargo fmt"},
	"java":   {"mvn test", "mvn package", "mvn verify", "./mvnw test", "gradle test", "gradle build", "./gradlew test", "./gradlew build"},
	"kotlin": {"gradle test", "gradle build", "./gradlew test", "./gradlew build"},
	"ruby":   {"bundle exec rspec", "bundle exec rake test", "rake test", "rspec"},
	"php":    {"composer test", "vendor/bin/phpunit", "phpunit"},
	"elixir": {"mix test", "mix compile", "mix format"},
	"c++":    {"cmake --build", "ctest"},
	"make":   {"make test", "make build", "make check", "make lint", "make all"},
}

// BuildCommands are the test and build commands of a project type ("go",
// "node", …; see internal/workspace), nil for an unknown one. The caller
// may add the owner's own to Task.Commands.
func BuildCommands(projectType string) []string {
	return append([]string(nil), buildCommands[projectType]...)
}
