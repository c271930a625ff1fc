"""The runs tables (store migration 2)."""

RUNS_MIGRATION = """
CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    trials INTEGER NOT NULL,
    seed_mode TEXT NOT NULL,
    batch_seed INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    launch_id TEXT NOT NULL,          -- the batch id of a series, else the run id: one queue slot each
    batch_id TEXT,
    trial INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    scenario_hash TEXT NOT NULL,
    match_id TEXT UNIQUE,
    scripted INTEGER NOT NULL,        -- every seat local: replayable from scratch after a restart
    effective TEXT NOT NULL,          -- JSON
    roster TEXT NOT NULL,             -- JSON, resolved seats with usage
    cap_usd REAL,
    spend_usd REAL NOT NULL DEFAULT 0,
    turns_reserved INTEGER NOT NULL,
    turns_settled INTEGER,
    live_tick INTEGER,
    stop_reason TEXT,
    error TEXT,                       -- JSON {error, message}
    results TEXT,                     -- JSON results object
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    started_at_ms INTEGER,
    finished_at_ms INTEGER
);
CREATE INDEX runs_account ON runs(account_id, seq);
CREATE INDEX runs_status ON runs(status, seq);
CREATE INDEX runs_batch ON runs(batch_id, trial);
"""
