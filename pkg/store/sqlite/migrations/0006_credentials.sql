-- The token vault: one sealed record (pkg/vault) per tenant, subject (a
-- user identity, '' for the whole tenant) and MCP server. The store never
-- sees inside sealed.
CREATE TABLE credentials (
    tenant  TEXT NOT NULL,
    subject TEXT NOT NULL,
    server  TEXT NOT NULL,
    key_id  TEXT NOT NULL,                 -- the vault key that sealed it
    sealed  BLOB NOT NULL,
    version INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (tenant, subject, server)
) WITHOUT ROWID;
