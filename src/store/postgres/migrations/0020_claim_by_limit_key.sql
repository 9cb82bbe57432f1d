-- oldest-compatible-code: 15
-- As SQLite's 0020: a limited claim whose backlog's keys are all at their limit read the
-- whole backlog (46.5 ms a claim past 100,000 deliveries to 3 full endpoints). The pick
-- reads a bounded stretch in claim order and, when that comes up short while keys are full,
-- walks the keys in this index and takes the head of each one that has room. Only keyed
-- jobs are indexed.
CREATE INDEX mailroom_job_limit_key_idx ON mailroom_job (type, limit_key, priority DESC, run_at, id)
WHERE status = 'pending' AND limit_key IS NOT NULL;
