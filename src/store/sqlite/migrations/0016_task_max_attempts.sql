-- oldest-compatible-code: 15
-- The task directory also holds each type's attempt budget (its maxAttempts; NULL when the
-- task leaves it to the default), so a process that enqueues a type it did not register
-- stores the budget its worker declared instead of the default 5. A job keeps the budget
-- it was enqueued with. Code of 0015 neither reads nor writes these columns, and its
-- record of a type moves recorded_at alone: the budget counts only while
-- max_attempts_recorded_at equals recorded_at, so after a rollback to such code (or beside
-- a worker of it) the type gets the default, never a newer release's budget.
ALTER TABLE mailroom_task ADD COLUMN max_attempts INTEGER;
ALTER TABLE mailroom_task ADD COLUMN max_attempts_recorded_at INTEGER;
