// The retry-policy part of a configured task, shared by the built-in task kinds and the
// module loader, so a policy set in config means the same for every kind.

import type { TaskDefinition } from '../core/task-registry.js';
import type { TaskPolicyConfig } from './define-config.js';

/** The policy fields a task config sets (unset ones are left to the task or the defaults). */
export function policyOf(task: TaskPolicyConfig): Partial<TaskDefinition> {
  const policy: Record<string, unknown> = {};
  for (const key of ['maxAttempts', 'timeoutMs', 'backoff', 'retryScheduleMs', 'queue', 'maxSnoozes', 'maxResultBytes', 'limits'] as const) {
    if (task[key] !== undefined) policy[key] = task[key];
  }
  return policy as Partial<TaskDefinition>;
}
