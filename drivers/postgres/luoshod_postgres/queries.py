"""The driver's SQL, one named constant per statement (the schema is in :mod:`.migrations`).

The tables are those of the SQLite driver: ``logs`` (one row per message log, owned by a
session), ``messages`` (a log's messages by index), ``sessions`` (the latest checkpoint: a
header over a prefix of a log), ``history`` (past headers, each over a prefix of a log),
``approvals``, ``events`` and ``event_logs`` (how many events each log keeps); plus
``requests`` (each session's applied request records, numbered in the order first
written) and ``leases`` (one row per session ever leased: owner, fencing token, expiry by the
database's clock). A batch of saves writes each table over arrays (``unnest``), the
tables' inserts merged into one statement (:func:`.ops.save_batch`), so a batch costs
the same few statements and two round trips whatever its size. Arrays are sent in binary
(``%b``), packed by :mod:`.arrays`: psycopg's text form escapes every element, and its
generic binary lists cost more than the rest of a save.
"""

# -- locks -----------------------------------------------------------------------------
# Advisory lock classes (the first key of the two-key form): every transaction that writes
# sessions takes LOCK_SESSION for each of them, in id order (no deadlock), and the
# migrations take LOCK_MIGRATE, so that daemons starting at once migrate one at a time.
LOCK_MIGRATE = 0x6C756F00  # "luo\0"
LOCK_SESSION = 0x6C756F01

# One lock per session, in the order of the (sorted) array.
LOCK_SESSIONS = """
SELECT count(pg_advisory_xact_lock(%s, hashtext(s))) FROM unnest(%b::text[]) AS s
"""

LOCK_MIGRATIONS = "SELECT pg_advisory_xact_lock(%s, 0)"

BEGIN = "BEGIN"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

READ_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"

# -- sessions --------------------------------------------------------------------------
# The header and the messages of its prefix, concatenated (one snapshot, one round trip).
SELECT_SESSION = """
SELECT s.header::text,
       (SELECT string_agg(m.body, ''::bytea ORDER BY m.idx) FROM messages m
        WHERE m.log_id = s.log_id AND m.idx < s.message_count)
FROM sessions s WHERE s.session_id = %s
"""

UPSERT_SESSIONS = """
INSERT INTO sessions (session_id, log_id, version, status, message_count, updated_at, header)
SELECT * FROM unnest(%b::text[], %b::bigint[], %b::bigint[], %b::text[], %b::bigint[],
                     %b::float8[], %b::json[])
ON CONFLICT (session_id) DO UPDATE SET
    log_id = excluded.log_id,
    version = excluded.version,
    status = excluded.status,
    message_count = excluded.message_count,
    updated_at = excluded.updated_at,
    header = excluded.header
"""

# RETURNING: in pipeline mode a row count is only known once results are read.
DELETE_SESSION = "DELETE FROM sessions WHERE session_id = %s RETURNING session_id"

# One more row than the page asks for tells whether another page follows.
LIST_SESSIONS = """
SELECT message_count, header::text FROM sessions
WHERE session_id > %(after)s
ORDER BY session_id LIMIT %(limit)s
"""

LIST_SESSIONS_BY_STATUS = """
SELECT message_count, header::text FROM sessions
WHERE status = %(status)s AND session_id > %(after)s
ORDER BY session_id LIMIT %(limit)s
"""

# A prefix's ids: the range [low, high) but skip (the page token's id), from the index.
LIST_SESSIONS_IN = """
SELECT message_count, header::text FROM sessions
WHERE session_id >= %(low)s AND session_id < %(high)s AND session_id <> %(skip)s
ORDER BY session_id LIMIT %(limit)s
"""

LIST_SESSIONS_IN_BY_STATUS = """
SELECT message_count, header::text FROM sessions
WHERE status = %(status)s AND session_id >= %(low)s AND session_id < %(high)s
  AND session_id <> %(skip)s
ORDER BY session_id LIMIT %(limit)s
"""

# -- logs and messages -----------------------------------------------------------------
INSERT_LOG = "INSERT INTO logs (session_id) VALUES (%s) RETURNING log_id"

INSERT_MESSAGES = """
INSERT INTO messages (log_id, idx, body)
SELECT * FROM unnest(%b::bigint[], %b::bigint[], %b::bytea[])
"""

# The first n messages of each log given, concatenated.
SELECT_LOGS = """
SELECT l.log_id,
       (SELECT string_agg(m.body, ''::bytea ORDER BY m.idx) FROM messages m
        WHERE m.log_id = l.log_id AND m.idx < l.n)
FROM unnest(%b::bigint[], %b::bigint[]) AS l (log_id, n)
"""

# Logs of the given sessions that neither the session nor any of its history entries refer
# to; their messages go with them (ON DELETE CASCADE). Run after every save batch over its
# sessions (no read of which ones have an old log first: a round trip more): a session
# with one log is skipped at its first lookup (its row refers to that log).
DELETE_UNREFERENCED_LOGS = """
DELETE FROM logs l
WHERE l.session_id = ANY(%b::text[])
  AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = l.session_id
                                             AND s.log_id = l.log_id)
  AND NOT EXISTS (SELECT 1 FROM history h WHERE h.session_id = l.session_id
                                            AND h.log_id = l.log_id)
"""

# The same, in one statement with PRUNE_HISTORY as the CTE ``pruned`` (RETURNING id): the
# statement does not see its own CTE's deletions, so the entries it prunes are left out.
DELETE_PRUNED_LOGS = """
DELETE FROM logs l
WHERE l.session_id = ANY(%b::text[])
  AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = l.session_id
                                             AND s.log_id = l.log_id)
  AND NOT EXISTS (SELECT 1 FROM history h WHERE h.session_id = l.session_id
                                            AND h.log_id = l.log_id
                                            AND h.id NOT IN (SELECT id FROM pruned))
"""

DELETE_SESSION_LOGS = "DELETE FROM logs WHERE session_id = %s"

# -- history ---------------------------------------------------------------------------
# Ids grow with every insert, in the order of the arrays (the newest entry last).
INSERT_HISTORY = """
INSERT INTO history (session_id, step, status, saved_at, log_id, message_count, header)
SELECT session_id, step, status, saved_at, log_id, message_count, header
FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::float8[], %b::bigint[], %b::bigint[],
            %b::json[])
     WITH ORDINALITY AS h (session_id, step, status, saved_at, log_id, message_count, header, n)
ORDER BY n
"""

# Keeps the newest `keep` entries of each session given: the older ones, found through
# the (session_id, id) index from the newest, go.
PRUNE_HISTORY = """
DELETE FROM history WHERE id IN (
    SELECT old.id FROM unnest(%b::text[], %b::bigint[]) AS k (session_id, keep)
    CROSS JOIN LATERAL (
        SELECT id FROM history WHERE session_id = k.session_id
        ORDER BY id DESC OFFSET k.keep
    ) AS old
)
"""

DELETE_HISTORY = "DELETE FROM history WHERE session_id = %s"

SELECT_HISTORY = """
SELECT step, saved_at, status, log_id, message_count, header::text FROM history
WHERE session_id = %s
ORDER BY id DESC LIMIT %s
"""

# Every session with a checkpoint, a kept history or an event log, in id order (store copy).
SESSION_IDS = """
SELECT session_id FROM sessions WHERE session_id > %(after)s
UNION
SELECT session_id FROM history WHERE session_id > %(after)s
UNION
SELECT session_id FROM event_logs WHERE session_id > %(after)s
ORDER BY 1 LIMIT %(limit)s
"""

# -- approvals -------------------------------------------------------------------------
# An id held for another session moves to this one (import; ids are unique in practice).
UPSERT_APPROVALS = """
INSERT INTO approvals (approval_id, session_id, body)
SELECT * FROM unnest(%b::text[], %b::text[], %b::json[])
ON CONFLICT (approval_id) DO UPDATE SET
    session_id = excluded.session_id,
    body = excluded.body
"""

DELETE_APPROVALS = "DELETE FROM approvals WHERE approval_id = ANY(%b::text[])"

DELETE_SESSION_APPROVALS = "DELETE FROM approvals WHERE session_id = %s"

SELECT_APPROVAL = "SELECT body::text FROM approvals WHERE approval_id = %s"

LIST_APPROVALS = """
SELECT body::text FROM approvals
WHERE approval_id > %(after)s
ORDER BY approval_id LIMIT %(limit)s
"""

LIST_SESSION_APPROVALS = """
SELECT body::text FROM approvals
WHERE session_id = %(session_id)s AND approval_id > %(after)s
ORDER BY approval_id LIMIT %(limit)s
"""

# -- event logs ------------------------------------------------------------------------
INSERT_EVENTS = """
INSERT INTO events (session_id, seq, data)
SELECT * FROM unnest(%b::text[], %b::bigint[], %b::bytea[])
"""

UPSERT_EVENT_LOGS = """
INSERT INTO event_logs (session_id, kept)
SELECT * FROM unnest(%b::text[], %b::bigint[])
ON CONFLICT (session_id) DO UPDATE SET kept = excluded.kept
"""

# The rows of each session given keyed at or below its floor (loose events and whole
# blocks), found from the start of its index: O(rows deleted).
PRUNE_EVENTS = """
DELETE FROM events e USING unnest(%b::text[], %b::bigint[]) AS k (session_id, floor)
WHERE e.session_id = k.session_id AND e.seq <= k.floor
"""

# The rows of a range to seal (loose events; a block there would be found too).
SELECT_EVENT_RANGE = """
SELECT seq, data FROM events
WHERE session_id = %(session_id)s AND seq BETWEEN %(first)s AND %(last)s
ORDER BY seq
"""

DELETE_EVENT_RANGE = """
DELETE FROM events WHERE session_id = %(session_id)s AND seq BETWEEN %(first)s AND %(last)s
"""

INSERT_EVENT = """
INSERT INTO events (session_id, seq, data) VALUES (%(session_id)s, %(last)s, %(data)s)
"""

SELECT_EVENTS = """
SELECT seq, data FROM events
WHERE session_id = %(session_id)s AND seq > %(after)s
ORDER BY seq LIMIT %(limit)s
"""

# The first and last seq kept (two lookups at the ends of the index, not a scan).
SELECT_EVENT_ENDS = """
SELECT (SELECT min(seq) FROM events WHERE session_id = %(session_id)s),
       (SELECT max(seq) FROM events WHERE session_id = %(session_id)s)
"""

DELETE_EVENTS = "DELETE FROM events WHERE session_id = %s"

DELETE_EVENT_LOGS = "DELETE FROM event_logs WHERE session_id = ANY(%b::text[])"

# -- applied request records (R74) -----------------------------------------------------
UPSERT_REQUESTS = """
INSERT INTO requests (session_id, request_id, n, body)
SELECT * FROM unnest(%b::text[], %b::text[], %b::bigint[], %b::json[])
ON CONFLICT (session_id, request_id) DO UPDATE SET n = excluded.n, body = excluded.body
"""

# The records numbered up to each floor, from the start of the (session_id, n) index.
PRUNE_REQUESTS = """
DELETE FROM requests r USING unnest(%b::text[], %b::bigint[]) AS k(s, floor)
WHERE r.session_id = k.s AND r.n <= k.floor
"""

SELECT_REQUEST = "SELECT body::text FROM requests WHERE session_id = %s AND request_id = %s"

SELECT_REQUESTS = "SELECT body::text FROM requests WHERE session_id = %s ORDER BY n"

DELETE_REQUESTS = "DELETE FROM requests WHERE session_id = %s"

# -- leases ----------------------------------------------------------------------------
# Expiry is by the database's clock, so that daemons on different hosts agree; ``now`` is
# NULL for it, or the epoch seconds of a clock set on the store (``Store.clock``: tests).
# A lease is granted when the session was never leased (token 1), or when the holder's
# lease expired or was released (expires_at -infinity) — never over a live one, its own
# holder's included; each grant takes the next token. One statement: of two daemons
# racing, the second waits on the row and then sees the first one's lease.
_NOW = "coalesce(to_timestamp(%(now)s::float8), clock_timestamp())"

ACQUIRE_LEASE = f"""
INSERT INTO leases AS l (session_id, owner, token, expires_at, address)
VALUES (%(session_id)s, %(owner)s, 1, {_NOW} + make_interval(secs => %(ttl)s), %(address)s)
ON CONFLICT (session_id) DO UPDATE SET
    owner = excluded.owner,
    token = l.token + 1,
    expires_at = excluded.expires_at,
    address = excluded.address
WHERE l.expires_at <= {_NOW}
RETURNING token, extract(epoch FROM expires_at)::float8
"""

SELECT_LEASE = """
SELECT owner, token, extract(epoch FROM expires_at)::float8 FROM leases WHERE session_id = %s
"""

# The holder that refused an acquire, if its lease is still live (it may have been
# released or have expired since).
SELECT_LIVE_LEASE = f"""
SELECT owner, token, extract(epoch FROM expires_at)::float8 FROM leases
WHERE session_id = %(session_id)s AND expires_at > {_NOW}
"""

RENEW_LEASE = f"""
UPDATE leases SET expires_at = {_NOW} + make_interval(secs => %(ttl)s)
WHERE session_id = %(session_id)s AND token = %(token)s
RETURNING extract(epoch FROM expires_at)::float8
"""

# A daemon's lease upkeep: every lease it holds renewed in one statement (one commit);
# each row tells whether it was renewed (its new expiry) or else the session's token now.
# The rows are locked in id order first, as saves lock them (READ_PARTS["tokens"]): an UPDATE
# joined in any other order could deadlock with a save batch of the same sessions.
RENEW_LEASES = f"""
WITH given AS (
    SELECT * FROM unnest(%(sessions)s::text[], %(tokens)s::bigint[]) AS g(session_id, token)
), locked AS (
    SELECT l.session_id FROM leases AS l JOIN given AS g ON g.session_id = l.session_id
    WHERE l.token = g.token
    ORDER BY l.session_id
    FOR UPDATE OF l
), renewed AS (
    UPDATE leases AS l SET expires_at = {_NOW} + make_interval(secs => %(ttl)s)
    FROM locked WHERE l.session_id = locked.session_id
    RETURNING l.session_id, extract(epoch FROM l.expires_at)::float8 AS expires_at
)
SELECT g.session_id, r.expires_at, l.token
FROM given AS g
LEFT JOIN renewed AS r ON r.session_id = g.session_id
LEFT JOIN leases AS l ON l.session_id = g.session_id
"""

LIST_LEASES = f"""
SELECT session_id, owner, token, extract(epoch FROM expires_at)::float8, address FROM leases
WHERE session_id > %(after)s AND expires_at > {_NOW}
    AND (%(owner)s::text IS NULL OR owner = %(owner)s::text)
ORDER BY session_id LIMIT %(limit)s
"""

RELEASE_LEASE = """
UPDATE leases SET expires_at = '-infinity'
WHERE session_id = %(session_id)s AND token = %(token)s
"""

RELEASE_LEASES_OF = f"""
WITH released AS (
    UPDATE leases SET expires_at = '-infinity'
    WHERE owner = %(owner)s AND expires_at > {_NOW}
    RETURNING 1
)
SELECT count(*) FROM released
"""

# -- what a save batch is checked against, in one statement ------------------------------
# The reads of a batch (those with keys) as the branches of one UNION ALL, each row tagged
# with its branch (READ_PARTS, in this order) in one shape:
# (tag, text, text, bigint, bigint, bigint). The locking reads are CTEs (FOR SHARE and FOR
# UPDATE are not allowed in a UNION's branch), read first, the tokens in id order. One
# statement, one snapshot, taken after the sessions' locks (LOCK_SESSIONS, a statement
# before it): a statement a read cost the event loop more than its rows.
READ_PARTS: dict[str, tuple[str, str]] = {
    # name: (its CTE, or ""; its branch of the UNION ALL)
    # The fencing tokens of the sessions given, held (FOR SHARE) until the writing
    # transaction commits: a lease cannot be taken over between a save's check and its
    # commit.
    "tokens": (
        "tokens AS (SELECT session_id, token FROM leases WHERE session_id = ANY(%b::text[]) "
        "ORDER BY session_id FOR SHARE)",
        "SELECT 0, session_id, NULL::text, token, NULL::bigint, NULL::bigint FROM tokens",
    ),
    # The latest checkpoint of each session given: its log, version and message count.
    "heads": (
        "",
        "SELECT 1, session_id, NULL, log_id, version, message_count FROM sessions "
        "WHERE session_id = ANY(%b::text[])",
    ),
    # Which of the approvals given are pending, and for which session; locked until commit.
    "pending": (
        "pending AS (SELECT approval_id, session_id FROM approvals "
        "WHERE approval_id = ANY(%b::text[]) FOR UPDATE)",
        "SELECT 2, approval_id, session_id, NULL, NULL, NULL FROM pending",
    ),
    # Of the sessions given, those with an event log: how many events it keeps and its last
    # seq (found at the end of the (session_id, seq) index).
    "event_logs": (
        "",
        "SELECT 3, l.session_id, NULL, l.kept, "
        "(SELECT max(e.seq) FROM events e WHERE e.session_id = l.session_id), NULL "
        "FROM event_logs l WHERE l.session_id = ANY(%b::text[])",
    ),
    # Of the sessions given, the highest record number (NULL: none).
    "request_last": (
        "",
        "SELECT 4, s, NULL, (SELECT max(r.n) FROM requests r WHERE r.session_id = s), NULL, "
        "NULL FROM unnest(%b::text[]) AS s",
    ),
    # Of the (session id, request id) pairs given as two arrays, those stored.
    "request_numbers": (
        "",
        "SELECT 5, r.session_id, r.request_id, r.n, NULL, NULL "
        "FROM unnest(%b::text[], %b::text[]) AS k(s, i) "
        "JOIN requests r ON r.session_id = k.s AND r.request_id = k.i",
    ),
}

# The transactions (of any daemon on this database: the same application_name, luoshod's
# unless the URL sets another) that have waited on their client in
# the middle of a pipeline for longer than the bound given in seconds: the server reads
# the next statement ("active", ClientRead) with the transaction's locks held, and no
# server timeout ends that wait (idle_in_transaction_session_timeout starts only after a
# Sync). Ended as that timeout would have ended them; their pids are returned.
END_STALLED = """
WITH stalled AS MATERIALIZED (
    SELECT pid FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND application_name = current_setting('application_name')
        AND state IN ('active', 'idle in transaction') AND wait_event = 'ClientRead'
        AND xact_start IS NOT NULL AND state_change < now() - make_interval(secs => %s)
)
SELECT pid FROM stalled WHERE pg_terminate_backend(pid)
"""

# -- commit marks ------------------------------------------------------------------------
# With failover on (a URL naming several hosts, or failover_timeout set), every write
# transaction inserts a random mark and holds the one-key advisory lock of it (the one-key
# and two-key lock spaces do not overlap) until it ends. When a commit's answer is lost
# (the connection broke during COMMIT), a new transaction on whichever server now takes
# writes waits for that lock (the first transaction has then ended, whatever became of it)
# and touches the mark: a mark found was committed, and once the touching transaction's own
# commit is acknowledged (synchronous commit: the standby has it) so is everything before
# it; no mark: it was not committed, and never will be.
MARK_COMMIT = """
WITH locked AS (SELECT pg_advisory_xact_lock(%(mark)s))
INSERT INTO commit_marks (mark) SELECT %(mark)s FROM locked
"""

LOCK_MARK = "SELECT pg_advisory_xact_lock(%s)"

CONFIRM_MARK = "UPDATE commit_marks SET made_at = made_at WHERE mark = %s RETURNING mark"

# Marks older than this are only ever asked about by a call that gave up long ago.
PRUNE_MARKS = "DELETE FROM commit_marks WHERE made_at < now() - make_interval(secs => %s)"
