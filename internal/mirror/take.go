package mirror

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Has tells whether the mirror of workspace ws has commit sha (false when
// it has no mirror yet or cannot tell).
func (m *Mirror) Has(ctx context.Context, ws, sha string) bool {
	if checkName(ws) != nil || checkSHA(sha) != nil {
		return false
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return false
	}
	defer unlock()
	dir := m.dir(ws)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	got, err := m.resolve(ctx, dir, sha)
	return err == nil && got == sha
}

// Take brings branch, at tip, into the mirror of ws from a bundle that
// crossed out of the kennel another way (a step of the batch that recorded
// the work), verified and fsck'd like Import's. A bundle whose
// prerequisites the mirror lacks is an error wrapping ErrBadBundle (Import
// then brings the whole history).
func (m *Mirror) Take(ctx context.Context, ws, branch, tip string, bundle io.Reader) error {
	op := "mirror: take " + branch
	if err := checkName(ws); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := checkBranch(branch); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := checkSHA(tip); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := m.lock(ctx, ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	dir, err := m.ensure(ctx, ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	f, err := os.CreateTemp(m.tmpDir(), "take-*.bundle")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(&limitWriter{w: f, max: m.cfg.MaxBundle}, bundle); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := m.takeBundle(ctx, dir, f.Name(), "refs/heads/"+branch, tip); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	m.log.Info("mirror: took", logWorkspace, ws, logBranch, branch, "commit", tip)
	return nil
}
