-- oldest-compatible-code: 15
-- A limited claim whose backlog's keys are all at their limit read the whole backlog: its
-- pick walks the type's pending jobs in claim order and leaves out the full keys' rows, so
-- with 100,000 deliveries waiting for 3 endpoints that each had their concurrency in
-- flight (a slow endpoint that still answers, so its breaker stays closed), every claim of
-- the worker took 56 ms inside the write transaction, and ingress and enqueues waited
-- behind it. The pick now reads a bounded stretch in claim order and, when that comes up
-- short while keys are full, walks the keys in this index and takes the head of each one
-- that has room. Only keyed jobs are indexed (per-key limits' jobs): a plain job pays
-- nothing. Old code never names it and runs as before.
CREATE INDEX mailroom_job_limit_key_idx ON mailroom_job (type, limit_key, priority DESC, run_at, id)
WHERE status = 'pending' AND limit_key IS NOT NULL;
