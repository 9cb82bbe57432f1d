-- oldest-compatible-code: 13
-- Claims find pending jobs by type. A claim (and a worker's poll, and drained()) walked
-- every pending job in claim order and passed over the types it does not run, so a worker
-- beside a backlog of other types paid for the whole backlog on every poll: serve's
-- deliver worker while separate workers run the tasks, or a worker for some of the
-- tasks. Measured: 27 ms a claim beside 200,000 pending jobs of another type; with this
-- index 0.04 ms, and the same for a claim of the backlog's own type (each type's pending
-- jobs are in claim order here; the claim merges the types it runs). The index it
-- replaces served only those walks, so an insert writes as many index entries as before.
-- Code of 0013 names neither index and runs against this schema unchanged.
CREATE INDEX mailroom_job_claim_type_idx ON mailroom_job (type, priority DESC, run_at, id)
WHERE status = 'pending';

DROP INDEX mailroom_job_claim_idx;
