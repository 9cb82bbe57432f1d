-- oldest-compatible-code: 15
-- As SQLite's 0021: mailroom_delivery_pending_idx (0012) counted an endpoint's backlog
-- until 0013 made the backlog a counter kept by triggers. No statement reads the index
-- any more, and every delivery still paid for it: an entry at publish, and, because its
-- predicate names `status`, no record of an attempt could be a HOT update, so each one
-- wrote a new entry into every index of the table. No code names the index: older code
-- runs as before.
DROP INDEX IF EXISTS mailroom_delivery_pending_idx;
