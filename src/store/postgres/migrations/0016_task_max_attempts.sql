-- oldest-compatible-code: 15
-- PostgreSQL dialect of sqlite/migrations/0016: the task directory also holds each type's
-- maxAttempts (NULL: the default), for processes that enqueue a type they did not
-- register. Code of 0015 neither reads nor writes these columns; the budget counts only
-- while max_attempts_recorded_at equals recorded_at (a record by 0015 code moves
-- recorded_at alone, and the type gets the default).
ALTER TABLE mailroom_task ADD COLUMN max_attempts integer, ADD COLUMN max_attempts_recorded_at timestamptz;
