-- Nothing to do on SQLite: its key index has been partial since 0001. Versions match
-- across dialects.
SELECT 1;
