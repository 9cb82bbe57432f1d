// Public exports of the `mailroom` package. Nothing inside the package imports this file.

export { Mailroom, DEFAULT_DONE_RETENTION_MS } from './mailroom.js';
export type {
  MailroomOptions,
  EnqueueOptions,
  EnqueueManyItem,
  EnqueueBatchOptions,
  PauseQueueOptions,
  EnqueuedBatch,
  BatchThen,
  ListJobsOptions,
  ListEventsOptions,
  ReplayTarget,
  ReplayOptions,
  ReplayResult,
  RetryNowFilter,
  RetryNowResult,
  PurgeOptions,
  MailroomStats,
  SyncTransaction,
  AsyncTransaction,
  PublishOptions,
  PublishResult,
  OutgoingEvents,
} from './mailroom.js';
export type { EndpointDisableCause } from './tasks/deliver/deliver-task.js';
export type { EndpointAddOptions, EndpointUpdateOptions, EndpointWithSecret, RotatedSecret, RecoverResult, DeliveryListOptions } from './outgoing/endpoints-api.js';
export type { EndpointsOptions } from './tasks/deliver/deliver-settings.js';
export type { BreakerSettings } from './core/circuit-breaker.js';
export type { BreakerState, Delivery, DeliveryStatus, Endpoint, EndpointHealth, EndpointRateLimit, Message } from './core/outgoing-types.js';
export { Worker } from './worker/worker.js';
export type { ScheduleOptions } from './maintenance/cron-scheduler.js';
export type { RetentionSettings } from './maintenance/retention.js';
export type { WorkerOptions, WorkerStopOptions, WorkerEvents } from './worker/worker.js';
export type { BatchContext, Tasks, TaskContext, TaskDefinition, TaskHandler, PayloadOf } from './core/task-registry.js';
export type { Attempt, AttemptOutcome, Batch, ClaimedJob, DeadReason, EventSummary, InboundEvent, Job, JobDetail, JobStats, JobStatus, Replay, StatusCounts } from './core/types.js';
export {
  MailroomError,
  Permanent,
  RetryAfter,
  Snooze,
  ResultUnstorableError,
  ConfigError,
  StoreUnavailableError,
  StoreUrlError,
  SchemaTooNewError,
  MigrationError,
  KeyConflictError,
  JobNotFoundError,
  JobStateError,
  InvalidArgumentError,
  UnsupportedError,
  UnsafeFilesystemError,
  ClosedError,
  LeaseLostError,
  TimeoutError,
  MessageKeyConflictError,
  EndpointNotFoundError,
  MessageNotFoundError,
  RotationInProgressError,
  EndpointDisabledError,
  UrlBlockedError,
  ERROR_CODES,
  isPermanent,
} from './core/errors.js';
export type { ErrorCode } from './core/errors.js';
// What a store call can throw besides the errors above (every driver error is mapped to one).
export { StoreError, StoreClosedError, TransactionAbortedError, UniqueViolationError, UnstorableValueError } from './store/errors.js';
export type { BackoffOptions, Jitter } from './core/backoff.js';
export type { Store, StoreCapabilities } from './store/store.js';
export { defineConfig } from './config/define-config.js';
export { createLogger } from './log.js';
export type { Logger, LoggerOptions } from './log.js';
export type {
  MailroomConfig,
  SourceConfig,
  SourceTaskConfig,
  TaskConfig,
  TaskPolicyConfig,
  ForwardTaskConfig,
  ExecTaskConfig,
  ModuleTaskConfig,
  ScheduleConfig,
  ServerConfig,
  WorkerConfig,
} from './config/define-config.js';
