-- oldest-compatible-code: 13
-- Nothing to do on PostgreSQL yet: SQLite's 0014 indexes pending jobs by type for the
-- claim. Versions match across dialects.
SELECT 1;
