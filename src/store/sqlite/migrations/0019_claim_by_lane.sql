-- oldest-compatible-code: 13
-- A worker that names its queues claims from each (queue, type) pair it runs. SPEC's lanes
-- (`mr.work({ queues: ['email'] })` beside `mr.work({ queues: ['reports'] })`, "so a
-- report backlog never delays password resets") read the type index and filtered by
-- queue, so the email worker walked every pending job of its types in other queues: with
-- 100,000 reports and 20 emails pending, 15.7 ms a claim (holding the write lock) and
-- 14.6 ms a "anything claimable?" probe. The old queue index would not do instead: a
-- worker on the default queue would walk the other types' backlog there (the outgoing
-- deliveries beside the app's jobs), the case 0014 fixed. This index serves both, and
-- replaces the queue index rather than joining it, so an insert or a claim writes as many
-- index entries as before; its other reader, the oldest-pending statistic, walks each
-- (queue, type) pair instead of each queue. Code of 0013 on names neither index; code
-- before this one still walks the oldest-pending statistic by queue, which without the
-- queue index reads each queue's pending rows: slower stats() while an upgrade rolls out.
CREATE INDEX mailroom_job_claim_lane_idx ON mailroom_job (queue, type, priority DESC, run_at, id)
WHERE status = 'pending';

DROP INDEX mailroom_job_claim_queue_idx;
