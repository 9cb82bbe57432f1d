-- Nothing to do on SQLite: 0002 rewrites PostgreSQL's counter trigger, and this store
-- keeps its counters in its own statements (see 0001). Versions match across dialects.
SELECT 1;
