-- oldest-compatible-code: 15
-- The task directory also holds each type's attempt budget (its maxAttempts; NULL when the
-- task leaves it to the default), so a process that enqueues a type it did not register
-- stores the budget its worker declared instead of the default 5. A job keeps the budget
-- it was enqueued with. Code of 0015 neither reads nor writes the column: its record of a
-- type leaves a newer worker's budget in place until that worker starts again.
ALTER TABLE mailroom_task ADD COLUMN max_attempts INTEGER;
