package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Take brings branch, at tip, into the mirror of ws from a bundle,
// verified and fsck'd like Stage's, then landed; the bundle may hold the
// whole history (there is no base to read changes from). For the tests,
// which seed mirrors with it. A bundle whose prerequisites the mirror
// lacks is an error wrapping ErrBadBundle and ErrMissingBase.
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
