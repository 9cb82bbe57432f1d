-- The W3C trace context (the propagator's carrier as JSON: traceparent, tracestate) of
-- whoever enqueued the job, so its attempts join that trace even when another process
-- runs them. NULL when no OpenTelemetry propagator was active: the default costs nothing.
-- Self-contained on purpose (a nullable column, no default, no index): it may be
-- renumbered when merged with another branch's migration of the same number.
ALTER TABLE mailroom_job ADD COLUMN trace_context TEXT;
