"""The driver's SQL, one named constant per statement (the schema is in :mod:`.migrations`).

Tables: ``logs`` (one row per message log, owned by a session), ``messages`` (a log's
messages by index), ``sessions`` (the latest checkpoint: a header over a prefix of a log)
and ``history`` (past headers, each over a prefix of a log). Nothing copies a transcript.
``approvals`` holds the pending approvals (their JSON), ``events`` the event logs
(``session_id, seq → data``: loose events and blocks of 64, keyed by their last seq,
:mod:`luoshod.store.kit.eventblocks`) and ``event_logs`` how many events each log keeps.
``requests`` holds each
session's applied request records (``session_id, request_id → n, JSON``), numbered in the
order first written.
"""

# -- transactions ----------------------------------------------------------------------
BEGIN_READ = "BEGIN"
BEGIN_WRITE = "BEGIN IMMEDIATE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

# -- sessions --------------------------------------------------------------------------
# The heads of a batch's sessions, given as one JSON array of ids.
SELECT_HEADS = """
SELECT session_id, log_id, version, message_count FROM sessions
WHERE session_id IN (SELECT value FROM json_each(?))
"""

SELECT_SESSION = """
SELECT log_id, message_count, header FROM sessions WHERE session_id = ?
"""

UPSERT_SESSION = """
INSERT INTO sessions (session_id, log_id, version, status, message_count, updated_at, header)
VALUES (:session_id, :log_id, :version, :status, :message_count, :updated_at, :header)
ON CONFLICT (session_id) DO UPDATE SET
    log_id = excluded.log_id,
    version = excluded.version,
    status = excluded.status,
    message_count = excluded.message_count,
    updated_at = excluded.updated_at,
    header = excluded.header
"""

DELETE_SESSION = "DELETE FROM sessions WHERE session_id = ?"

# One more row than the page asks for tells whether another page follows.
LIST_SESSIONS = """
SELECT message_count, header FROM sessions
WHERE session_id > :after
ORDER BY session_id LIMIT :limit
"""

LIST_SESSIONS_BY_STATUS = """
SELECT message_count, header FROM sessions
WHERE status = :status AND session_id > :after
ORDER BY session_id LIMIT :limit
"""

# A prefix's ids: the range [low, high) but skip (the page token's id), from the index.
LIST_SESSIONS_IN = """
SELECT message_count, header FROM sessions
WHERE session_id >= :low AND session_id < :high AND session_id <> :skip
ORDER BY session_id LIMIT :limit
"""

LIST_SESSIONS_IN_BY_STATUS = """
SELECT message_count, header FROM sessions
WHERE status = :status AND session_id >= :low AND session_id < :high
  AND session_id <> :skip
ORDER BY session_id LIMIT :limit
"""

# -- logs and messages -----------------------------------------------------------------
INSERT_LOG = "INSERT INTO logs (session_id) VALUES (?)"

INSERT_MESSAGE = "INSERT INTO messages (log_id, idx, body) VALUES (?, ?, ?)"

SELECT_MESSAGES = """
SELECT body FROM messages WHERE log_id = ? AND idx < ? ORDER BY idx
"""

# Logs that neither the session nor any of its history entries refer to; their messages go
# with them (ON DELETE CASCADE).
DELETE_UNREFERENCED_LOGS = """
DELETE FROM logs
WHERE session_id = :session_id
  AND log_id NOT IN (SELECT log_id FROM sessions WHERE session_id = :session_id)
  AND log_id NOT IN (SELECT log_id FROM history WHERE session_id = :session_id)
"""

# Of the sessions given as one JSON array of ids, those with more than one message log.
SESSIONS_WITH_OLD_LOGS = """
SELECT session_id FROM logs
WHERE session_id IN (SELECT value FROM json_each(?))
GROUP BY session_id HAVING count(*) > 1
"""

DELETE_SESSION_LOGS = "DELETE FROM logs WHERE session_id = ?"

# -- history ---------------------------------------------------------------------------
INSERT_HISTORY = """
INSERT INTO history (session_id, step, status, saved_at, log_id, message_count, header)
VALUES (:session_id, :step, :status, :saved_at, :log_id, :message_count, :header)
"""

# Keeps the newest :keep entries of the session (ids grow with every insert): the entries
# at or before the (keep+1)-th newest go, found through the (session_id, id) index.
PRUNE_HISTORY = """
DELETE FROM history
WHERE session_id = :session_id
  AND id <= (
      SELECT id FROM history WHERE session_id = :session_id
      ORDER BY id DESC LIMIT 1 OFFSET :keep
  )
"""

DELETE_HISTORY = "DELETE FROM history WHERE session_id = ?"

# Every session with a checkpoint, a kept history or an event log, in id order (store copy).
SESSION_IDS = """
SELECT session_id FROM sessions WHERE session_id > :after
UNION
SELECT DISTINCT session_id FROM history WHERE session_id > :after
UNION
SELECT session_id FROM event_logs WHERE session_id > :after
ORDER BY 1 LIMIT :limit
"""

# LIMIT -1 is SQLite for "no limit".
SELECT_HISTORY = """
SELECT step, saved_at, status, log_id, message_count, header FROM history
WHERE session_id = ?
ORDER BY id DESC LIMIT ?
"""


# -- approvals -------------------------------------------------------------------------
# Which of the approvals given as one JSON array of ids are pending, and for which session.
SELECT_PENDING = """
SELECT approval_id, session_id FROM approvals
WHERE approval_id IN (SELECT value FROM json_each(?))
"""

# An id held for another session moves to this one (import; ids are unique in practice).
UPSERT_APPROVAL = """
INSERT INTO approvals (approval_id, session_id, body) VALUES (?, ?, ?)
ON CONFLICT (approval_id) DO UPDATE SET
    session_id = excluded.session_id,
    body = excluded.body
"""

DELETE_APPROVAL = "DELETE FROM approvals WHERE approval_id = ?"

DELETE_SESSION_APPROVALS = "DELETE FROM approvals WHERE session_id = ?"

SELECT_APPROVAL = "SELECT body FROM approvals WHERE approval_id = ?"

# One more row than the page asks for tells whether another page follows.
LIST_APPROVALS = """
SELECT body FROM approvals
WHERE approval_id > :after
ORDER BY approval_id LIMIT :limit
"""

LIST_SESSION_APPROVALS = """
SELECT body FROM approvals
WHERE session_id = :session_id AND approval_id > :after
ORDER BY approval_id LIMIT :limit
"""

# -- event logs ------------------------------------------------------------------------
# Of the sessions given as one JSON array of ids, those with an event log: how many events
# it keeps and its last seq (found at the end of the (session_id, seq) index).
SELECT_EVENT_LOGS = """
SELECT l.session_id, l.kept,
       (SELECT max(e.seq) FROM events e WHERE e.session_id = l.session_id)
FROM event_logs l
WHERE l.session_id IN (SELECT value FROM json_each(?))
"""

INSERT_EVENT = "INSERT INTO events (session_id, seq, data) VALUES (?, ?, ?)"

UPSERT_EVENT_LOG = """
INSERT INTO event_logs (session_id, kept) VALUES (:session_id, :kept)
ON CONFLICT (session_id) DO UPDATE SET kept = excluded.kept
"""

# The rows of the session keyed at or below :floor (loose events and whole blocks), found
# from the start of its index: O(rows deleted).
PRUNE_EVENTS = "DELETE FROM events WHERE session_id = :session_id AND seq <= :floor"

# The rows of a range to seal (loose events; a block there would be found too).
SELECT_EVENT_RANGE = """
SELECT seq, data FROM events
WHERE session_id = :session_id AND seq BETWEEN :first AND :last
ORDER BY seq
"""

DELETE_EVENT_RANGE = (
    "DELETE FROM events WHERE session_id = :session_id AND seq BETWEEN :first AND :last"
)

SELECT_EVENTS = """
SELECT seq, data FROM events
WHERE session_id = :session_id AND seq > :after
ORDER BY seq LIMIT :limit
"""

# The first and last seq kept (two lookups at the ends of the index, not a scan).
SELECT_EVENT_ENDS = """
SELECT (SELECT min(seq) FROM events WHERE session_id = :session_id),
       (SELECT max(seq) FROM events WHERE session_id = :session_id)
"""

DELETE_EVENTS = "DELETE FROM events WHERE session_id = ?"

DELETE_EVENT_LOG = "DELETE FROM event_logs WHERE session_id = ?"

# -- applied request records (R74) -----------------------------------------------------
# Of the sessions given as one JSON array of ids, the highest record number (NULL: none).
SELECT_REQUEST_LAST = """
SELECT j.value, (SELECT max(r.n) FROM requests r WHERE r.session_id = j.value)
FROM json_each(?) j
"""

# Of the (session id, request id) pairs given as one JSON array of pairs, those stored.
SELECT_REQUEST_NUMBERS = """
SELECT r.session_id, r.request_id, r.n
FROM json_each(?) j
JOIN requests r
  ON r.session_id = json_extract(j.value, '$[0]') AND r.request_id = json_extract(j.value, '$[1]')
"""

UPSERT_REQUEST = """
INSERT INTO requests (session_id, request_id, n, body) VALUES (?, ?, ?, ?)
ON CONFLICT (session_id, request_id) DO UPDATE SET n = excluded.n, body = excluded.body
"""

# The records numbered up to :floor, from the start of the (session_id, n) index.
PRUNE_REQUESTS = "DELETE FROM requests WHERE session_id = :session_id AND n <= :floor"

SELECT_REQUEST = "SELECT body FROM requests WHERE session_id = ? AND request_id = ?"

SELECT_REQUESTS = "SELECT body FROM requests WHERE session_id = ? ORDER BY n"

DELETE_REQUESTS = "DELETE FROM requests WHERE session_id = ?"

# -- leases ---------------------------------------------------------------------------

SELECT_LEASE = "SELECT owner, token, expires_at FROM leases WHERE session_id = ?"

SELECT_TOKENS = """
SELECT session_id, token FROM leases WHERE session_id IN (SELECT value FROM json_each(?))
"""

UPSERT_LEASE = """
INSERT INTO leases (session_id, owner, token, expires_at, address) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
    owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at,
    address = excluded.address
"""

SET_LEASE_EXPIRY = "UPDATE leases SET expires_at = ? WHERE session_id = ? AND token = ?"

LIST_LEASES = """
SELECT session_id, owner, token, expires_at, address FROM leases
WHERE session_id > ? AND expires_at > ? AND (? IS NULL OR owner = ?)
ORDER BY session_id LIMIT ?
"""

RELEASE_LEASES_OF = "UPDATE leases SET expires_at = 0 WHERE owner = ? AND expires_at > ?"
