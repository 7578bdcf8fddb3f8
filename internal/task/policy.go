package task

import (
	"context"
	"errors"
	"fmt"

	"github.com/fetch-dev/fetch/instincts"
	"github.com/fetch-dev/fetch/internal/policy"
	"github.com/fetch-dev/fetch/internal/store"
)

// PolicyText is what /policy shows for a workspace at an autonomy level:
// what the level allows, the deny list, the test and build commands and the
// workspace's remembered rules with their ids.
func (e *Engine) PolicyText(ctx context.Context, workspace string, level instincts.Autonomy) (string, error) {
	rules, err := e.store.PolicyRules(ctx, workspace, "")
	if err != nil {
		return "", fmt.Errorf("task: policy: %w", err)
	}
	return policy.Text(workspace, level, policy.BuildCommands(e.cfg.Workspaces.ProjectType(workspace)), rules), nil
}

// RemovePolicyRule removes a remembered rule of the workspace (/policy
// remove ID) and audits who did; idText is what the owner typed.
func (e *Engine) RemovePolicyRule(ctx context.Context, workspace, idText, by string) (string, error) {
	id, err := policy.ParseRuleID(idText)
	if err != nil {
		return "", err
	}
	r, err := e.store.RemovePolicyRule(ctx, workspace, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("policy: there is no rule #%d in %s; /policy lists them", id, workspace)
	}
	if err != nil {
		return "", fmt.Errorf("task: remove policy rule: %w", err)
	}
	if err := e.store.Audit(ctx, store.AuditEntry{Actor: by, Action: policy.ActionRemove, Detail: e.store.Scrub(fmt.Sprintf("rule #%d in %s: %s", r.ID, workspace, policy.RuleText(r)))}); err != nil {
		e.log.Error("audit", "err", err)
	}
	return fmt.Sprintf("Removed rule #%d (%s).", r.ID, policy.RuleText(r)), nil
}
