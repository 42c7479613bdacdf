"""The driver's SQL, one named constant per statement (the schema is in :mod:`.migrations`).

Tables: ``logs`` (one row per message log, owned by a session), ``messages`` (a log's
messages by index), ``sessions`` (the latest checkpoint: a header over a prefix of a log)
and ``history`` (past headers, each over a prefix of a log). Nothing copies a transcript.
"""

# -- transactions ----------------------------------------------------------------------
BEGIN_READ = "BEGIN"
BEGIN_WRITE = "BEGIN IMMEDIATE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

# -- sessions --------------------------------------------------------------------------
SELECT_SESSION_HEAD = """
SELECT log_id, version, message_count FROM sessions WHERE session_id = ?
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

# -- history ---------------------------------------------------------------------------
INSERT_HISTORY = """
INSERT INTO history (session_id, step, status, saved_at, log_id, message_count, header)
VALUES (:session_id, :step, :status, :saved_at, :log_id, :message_count, :header)
"""

# Keeps the newest :keep entries of the session (ids grow with every insert).
PRUNE_HISTORY = """
DELETE FROM history
WHERE session_id = :session_id
  AND id NOT IN (
      SELECT id FROM history WHERE session_id = :session_id ORDER BY id DESC LIMIT :keep
  )
"""

DELETE_HISTORY = "DELETE FROM history WHERE session_id = ?"

# LIMIT -1 is SQLite for "no limit".
SELECT_HISTORY = """
SELECT step, saved_at, status, log_id, message_count, header FROM history
WHERE session_id = ?
ORDER BY id DESC LIMIT ?
"""

# Each save of a group commit runs in its own savepoint, so a refused one is undone alone.
SAVEPOINT = "SAVEPOINT save"
ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO save"
RELEASE_SAVEPOINT = "RELEASE save"
