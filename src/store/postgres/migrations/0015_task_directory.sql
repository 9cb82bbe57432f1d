-- oldest-compatible-code: 14
-- PostgreSQL dialect of sqlite/migrations/0015: what workers say about their task types
-- (queue, whether a per-key limit needs a key computed at enqueue), for processes that
-- enqueue a type they did not register. Code of 0014 never reads the table.
CREATE TABLE mailroom_task (
  type        text PRIMARY KEY,
  queue       text NOT NULL,
  keyed       boolean NOT NULL,
  recorded_at timestamptz NOT NULL
);
