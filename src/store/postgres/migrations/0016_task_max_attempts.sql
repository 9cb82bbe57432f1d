-- oldest-compatible-code: 15
-- PostgreSQL dialect of sqlite/migrations/0016: the task directory also holds each type's
-- maxAttempts (NULL: the default), for processes that enqueue a type they did not
-- register. Code of 0015 neither reads nor writes the column.
ALTER TABLE mailroom_task ADD COLUMN max_attempts integer;
