-- The W3C trace context (the propagator's carrier as JSON: traceparent, tracestate) of
-- whoever enqueued the job, so its attempts join that trace even when another process
-- runs them. NULL when no OpenTelemetry propagator was active: the default costs nothing.
-- A nullable column without a default is a catalog change only: no table rewrite, and the
-- ACCESS EXCLUSIVE lock is held for milliseconds. Self-contained on purpose: it may be
-- renumbered when merged with another branch's migration of the same number.
ALTER TABLE mailroom_job ADD COLUMN trace_context text;
