package mirror

import (
	"context"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/internal/redact"
)

// Finding is a secret in the lines a range adds: file, line in the new
// file, rule. It never holds the secret.
type Finding = redact.PatchFinding

// Scan looks for secrets in the lines that to adds over from (both full
// refs or commits of the workspace's mirror) and returns where they are.
// A patch over the bound (64 MiB) is scanned in part and comes back with
// the findings and an error wrapping ErrTooLarge.
func (m *Mirror) Scan(ctx context.Context, ws, from, to string) ([]Finding, error) {
	op := "mirror: scan"
	if m.cfg.Secrets == nil {
		return nil, fmt.Errorf("%s: no secret finder configured: %w", op, ErrInvalid)
	}
	if err := errors.Join(checkName(ws), checkRev(from), checkRev(to)); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.existing(ws)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	fromSHA, err := m.resolve(ctx, dir, from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	toSHA, err := m.resolve(ctx, dir, to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	patch, err := m.hostGit(ctx, hostCmd{gitDir: dir, max: maxDiff, args: []string{
		"diff", "--unified=0", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames",
		"--src-prefix=a/", "--dst-prefix=b/", fromSHA, toSHA, "--",
	}})
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	found := redact.FindInPatch(m.cfg.Secrets.Find, patch)
	if err != nil {
		return found, fmt.Errorf("%s: scanned in part: %w", op, err)
	}
	return found, nil
}
