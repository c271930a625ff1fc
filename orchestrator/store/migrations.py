"""The control plane's schema, as the append-only list of steps that built it."""
from __future__ import annotations

# Append-only: each entry moves the schema from version i to i+1. Never edit a shipped entry;
# a change to the schema is a new entry at the end.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        handle TEXT NOT NULL UNIQUE,
        plan TEXT NOT NULL,
        verified INTEGER NOT NULL DEFAULT 0,
        frozen INTEGER NOT NULL DEFAULT 0,
        created_at_ms INTEGER NOT NULL
    );
    CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        scopes TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER,
        revoked_at_ms INTEGER,
        last_used_at_ms INTEGER
    );
    CREATE INDEX tokens_account ON tokens(account_id);
    CREATE TABLE scenarios (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        season_ticks INTEGER NOT NULL,
        env TEXT NOT NULL,
        hash TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER
    );
    CREATE INDEX scenarios_account ON scenarios(account_id, seq);
    CREATE INDEX scenarios_name_hash ON scenarios(account_id, name, hash);
    CREATE TABLE skills (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        text TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER
    );
    CREATE INDEX skills_account ON skills(account_id, seq);
    CREATE TABLE security_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        kind TEXT NOT NULL,
        detail TEXT NOT NULL,
        at_ms INTEGER NOT NULL
    );
    CREATE TABLE email_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT REFERENCES accounts(id),
        to_addr TEXT NOT NULL,
        subject TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        sent_at_ms INTEGER,
        send_error TEXT
    );
    CREATE TABLE provider_keys (
        owner TEXT NOT NULL,           -- an account id, or 'platform' for the operator's sponsor keys
        provider TEXT NOT NULL,
        ciphertext BLOB NOT NULL,
        base_url TEXT,
        balance_usd REAL,
        models TEXT,                   -- JSON list; platform keys only
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER,
        PRIMARY KEY (owner, provider)
    );
    """,
    # the runs tables
    """
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
    """,
    # a self-hosted key may carry its own price (USD per million tokens in and out); none: free
    """
    ALTER TABLE provider_keys ADD COLUMN usd_per_mtok_in REAL;
    ALTER TABLE provider_keys ADD COLUMN usd_per_mtok_out REAL;
    """,
    # the web console: passwords, sessions, one-time sign-in links; mail delivery retries
    """
    CREATE TABLE console_passwords (
        account_id TEXT PRIMARY KEY REFERENCES accounts(id),
        password_hash TEXT NOT NULL,
        updated_at_ms INTEGER NOT NULL
    );
    CREATE TABLE console_sessions (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        csrf TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        revoked_at_ms INTEGER
    );
    CREATE INDEX console_sessions_account ON console_sessions(account_id);
    CREATE TABLE console_login_links (
        token_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        expires_at_ms INTEGER NOT NULL,
        used_at_ms INTEGER
    );
    ALTER TABLE email_outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE email_outbox ADD COLUMN next_attempt_at_ms INTEGER;
    """,
    # What every launch and estimate reads inside its write transaction (runs.ledger: turns held and
    # settled this month, launches in the queue), answered from this index alone. Without it each of
    # those sums read every run the account ever had, down past its results JSON to finished_at_ms:
    # 190 ms per launch at 20,000 runs of history, holding the write lock all the while.
    """
    CREATE INDEX runs_ledger ON runs(account_id, status, finished_at_ms, turns_settled, turns_reserved, launch_id);
    """,
    # GET /runs?status=...: an account's runs of one state, newest first, without walking every
    # other account's runs of that state (runs_status) to find its own
    """
    CREATE INDEX runs_account_status ON runs(account_id, status, seq);
    """,
    # docs/api.md: who stored a key ('operator' through `studio key set`, 'account' through
    # the web console; NULL rows predate the rule and are held to it like an account's), and the
    # outcome of checking the key with its provider when it was stored (ok, rejected, unreachable)
    """
    ALTER TABLE provider_keys ADD COLUMN stored_by TEXT;
    ALTER TABLE provider_keys ADD COLUMN check_status TEXT;
    ALTER TABLE provider_keys ADD COLUMN check_detail TEXT;
    ALTER TABLE provider_keys ADD COLUMN checked_at_ms INTEGER;
    """,
    # A model run's turns as they happen (runs/head/recorder.py): the owner's transcript while the run
    # plays, and what a resumed run replays after its worker or the service went away (play: the
    # seat's actions as the tick code took them, the seat's `played`; memory: the conversation entry the turn
    # left). n numbers the asks of one seat in one tick (an arena seat may be asked again after an
    # illegal move; a world seat is asked once). The rows of a run go when its match, transcript
    # included, is archived; a run that failed before that keeps them as its transcript.
    """
    CREATE TABLE run_turns (
        run_id TEXT NOT NULL,
        tick INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        n INTEGER NOT NULL DEFAULT 0,
        turn TEXT NOT NULL,
        play TEXT NOT NULL,
        memory TEXT,
        PRIMARY KEY (run_id, tick, seat, n)
    ) WITHOUT ROWID;
    ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;
    """,
    # Decision grading (docs/RUBRIC.md, orchestrator/grading): the run body's mode, the
    # grading's status (NULL: nothing to grade), decisions graded of the total counted once the match
    # is read, and how often it was started (a bounded retry). One row per graded decision and one
    # summary per graded seat, written as the workers' parts come back.
    """
    ALTER TABLE runs ADD COLUMN grading TEXT;
    ALTER TABLE runs ADD COLUMN grading_status TEXT;
    ALTER TABLE runs ADD COLUMN graded INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN grading_total INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN grading_starts INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX runs_grading ON runs(grading_status) WHERE grading_status IN ('pending', 'running');
    CREATE TABLE decision_turns (
        run_id TEXT NOT NULL,
        tick INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        turn TEXT NOT NULL,
        PRIMARY KEY (run_id, tick, seat)
    ) WITHOUT ROWID;
    CREATE TABLE decision_seats (
        run_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (run_id, seat)
    ) WITHOUT ROWID;
    """,
    # A series read (GET /batches/:id) without recomputing its summary (runs/series/summaries.py):
    # the summary kept per series with the digest of the scored matches it covers (version) and their
    # number (a process holding fewer never replaces it); and the series' runs, statuses and match ids
    # in trial order from one index, without reading the runs' rows
    """
    CREATE TABLE batch_summaries (
        batch_id TEXT PRIMARY KEY REFERENCES batches(id),
        version TEXT NOT NULL,
        matches INTEGER NOT NULL,
        summary TEXT NOT NULL,
        computed_at_ms INTEGER NOT NULL
    );
    CREATE INDEX runs_batch_state ON runs(batch_id, trial, status, id, match_id, grading_status);
    """,
    # the manifest of an ended run's match as its lander wrote it (JSON: files and sizes, node, pid)
    """
    ALTER TABLE runs ADD COLUMN archived TEXT;
    """,
    # What the key's check found its server can do (seats/probe.py): tool calls 'yes' or
    # 'no' (NULL: not probed, or no answer either way), what the probe saw, and the model it asked
    """
    ALTER TABLE provider_keys ADD COLUMN tools TEXT;
    ALTER TABLE provider_keys ADD COLUMN tools_detail TEXT;
    ALTER TABLE provider_keys ADD COLUMN tools_model TEXT;
    """,
    # Series that stop when precise enough, within a budget (docs/RUNS.md,
    # runs/series/stopping.py): the target (JSON, normalised), the budget and the plan's smallest
    # spend cap at launch, whether a trial can spend at all (its caps are reserved against the budget
    # only then), why the service stopped launching its trials, and each roster seat's confidence
    # sequence as the stopping rule last computed it (JSON)
    """
    ALTER TABLE batches ADD COLUMN until TEXT;
    ALTER TABLE batches ADD COLUMN budget_usd REAL;
    ALTER TABLE batches ADD COLUMN min_cap_usd REAL;
    ALTER TABLE batches ADD COLUMN trial_spends INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE batches ADD COLUMN stopped TEXT;
    ALTER TABLE batches ADD COLUMN cs TEXT;
    """,
    # A fork (docs/FORKS.md, orchestrator/runs/admission/forks.py): what its worker needs to start from
    # the original's log (JSON: original run and match, archive key, tick, continuation seed, arm, the
    # seats changed, reseeds); on a series, the fork it launched (run_id, tick, control)
    """
    ALTER TABLE runs ADD COLUMN fork TEXT;
    ALTER TABLE batches ADD COLUMN fork TEXT;
    """,
    # Several heads on one store: what only one of them may do at a time (dispatching) is held by a
    # lease, renewed by its holder and taken over by another head once it has expired unrenewed
    """
    CREATE TABLE leases (
        name TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        taken_at_ms INTEGER NOT NULL
    );
    """,
    # Per-minute request counts (orchestrator/ratelimit.py) kept in the store, so that every head on it
    # counts one token's requests, and one address's refused requests, together: a row per subject with
    # the minute it counts and its hits so far
    """
    CREATE TABLE rate_counts (
        scope TEXT NOT NULL,
        subject TEXT NOT NULL,
        period INTEGER NOT NULL,
        hits INTEGER NOT NULL,
        PRIMARY KEY (scope, subject)
    ) WITHOUT ROWID;
    """,
]
