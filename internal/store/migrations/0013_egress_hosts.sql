-- The hosts the owner allowed a workspace's runs to reach through the
-- kennel's way out (package kennel/egress), beside what each coding CLI
-- needs. One row per workspace (by name) and host, in egress.CheckHost's
-- canonical form.
CREATE TABLE workspace_hosts (
    workspace TEXT NOT NULL,
    host      TEXT NOT NULL,
    added_by  TEXT NOT NULL DEFAULT '',
    added_at  TEXT NOT NULL,
    PRIMARY KEY (workspace, host)
);
