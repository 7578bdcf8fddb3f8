package mirror

import (
	"context"
	"errors"
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
// the work), verified and fsck'd like Import's: Stage, then Land. A bundle
// whose prerequisites the mirror lacks is an error wrapping ErrBadBundle
// and ErrMissingBase (Import then brings the whole history).
func (m *Mirror) Take(ctx context.Context, ws, branch, tip string, bundle io.Reader) error {
	op := "mirror: take " + branch
	if err := errors.Join(checkName(ws), checkBranch(branch), checkSHA(tip)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	dir, fresh, err := m.ensureShared(ctx, ws)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	s, err := m.stage(ctx, stageSpec{ws: ws, branch: branch, dir: dir, fresh: fresh, tip: tip}, bundle)
	if errors.Is(err, ErrMissingBase) {
		err = fmt.Errorf("%w: %w", ErrBadBundle, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer s.Drop()
	if err := m.verify(ctx, s, ""); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := s.land(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	m.log.Info("mirror: took", logWorkspace, ws, logBranch, branch, "commit", tip)
	return nil
}
