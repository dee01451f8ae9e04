-- The token vault: one sealed record (pkg/vault) per tenant, subject (a
-- user identity, '' for the whole tenant) and MCP server. The store never
-- sees inside sealed.
CREATE TABLE credentials (
    tenant  TEXT COLLATE "C" NOT NULL,
    subject TEXT COLLATE "C" NOT NULL,
    server  TEXT COLLATE "C" NOT NULL,
    key_id  TEXT NOT NULL,                 -- the vault key that sealed it
    sealed  BYTEA NOT NULL,
    version BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    PRIMARY KEY (tenant, subject, server)
);
