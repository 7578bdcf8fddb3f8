// Package ship takes a task's finished branch off the machine: it stages
// the branch from the workspace's kennel in Fetch's own bare repository
// (package mirror), scans every commit it has over the task's base for
// secrets (lines added, binary files as text, messages, authors) and lands
// it only when none holds any, rebases it onto the latest base branch
// fetched from GitHub, scans the rebased commits again, pushes them with
// Fetch's token and opens a pull request (package github). Work too large
// to be scanned whole is neither landed nor pushed. It also follows the
// pull request (merged, closed) and carries out Merge and Close.
//
// Every workspace has a shipping mode (table workspace_ship): pr-required
// (the default: push and open a pull request, never touch the base
// branch), autonomous (may also merge its own pull request) and local
// (never push). An autonomous merge goes through a Gate (package review):
// the change within the workspace's limits and approved by Fetch's own
// review, which is posted on the pull request; anything else leaves the
// pull request open with PR.Held saying why it waits for the owner. The GitHub repository of a workspace is recorded when it is
// cloned from GitHub, or read once from its origin at the first shipment
// and kept: the origin is in a kennel-written .git/config, so it is not
// read again afterwards.
//
// Before a pull request opens or is updated (and so before Fetch merges
// one on its own), the workspace's checks run in its kennel on the task's
// branch (package checks, through Config.Checks). A failing check opens
// the pull request as a draft or, by the workspace's setting, opens none
// and pushes nothing (*ChecksError); either way the work is never merged
// on its own, even when the owner ships it anyway (Work.Anyway, which
// also marks a draft ready). A task may ask to be pushed alone or opened
// as a draft (Work.As), which Allows checks against the workspace.
//
// The token is Fetch's only: it goes to GitHub's API and to host git
// through its environment, never into a kennel, the database or a log.
package ship
