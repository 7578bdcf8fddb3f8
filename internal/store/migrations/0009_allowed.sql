-- The people besides the owner who may talk to Fetch, added by the owner
-- with /allow (FETCH_ALLOWED_IDS is a seed kept in the configuration, not
-- here). One row per channel and user id.
CREATE TABLE allowed_users (
    channel    TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    added_by   TEXT NOT NULL,
    added_at   TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
