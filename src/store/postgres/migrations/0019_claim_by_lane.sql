-- oldest-compatible-code: 13
-- Nothing to do on PostgreSQL: SQLite's 0019 indexes pending jobs by (queue, type) for the
-- claims of a worker that names its queues. PostgreSQL's claim plans from its statistics
-- and reads a named queue from its queue index. Versions match across dialects.
SELECT 1;
