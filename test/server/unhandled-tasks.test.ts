// A process that runs workers warns at start about a source or a schedule whose task it
// has no handler for: their jobs would otherwise wait in silence.

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { warnAboutUnhandledTasks, warnAboutUnknownQueues } from '../../src/server/unhandled-tasks.js';
import { jsonLines, logSink } from '../harness/log-sink.js';

describe('warnAboutUnhandledTasks', () => {
  it('names each source fan-out and schedule whose task this process cannot run, and only those', () => {
    const config = validateConfig({
      sources: { open: { provider: 'none', tasks: ['record', 'nosuch_task'] } },
      schedules: { nightly: { cron: '0 3 * * *', task: 'report' }, typo: { cron: '* * * * *', task: 'nosuch' } },
    });
    const sink = logSink();
    warnAboutUnhandledTasks(config, ['record', 'report'], pino({ level: 'warn' }, sink));
    expect(jsonLines(sink.text()).map((line) => [line.msg.split(' ')[0], line.source ?? line.schedule, line.task])).toEqual([
      ['source', 'open', 'nosuch_task'],
      ['schedule', 'typo', 'nosuch'],
    ]);
  });

  it('names a worker queue that no task uses and no stored job is on, and only that one', () => {
    const sink = logSink();
    warnAboutUnknownQueues(['email', 'emial', 'imports', 'webhooks'], ['email', 'webhooks'], ['imports'], pino({ level: 'warn' }, sink));
    expect(jsonLines(sink.text()).map((line) => line.queue)).toEqual(['emial']);
    const all = logSink();
    warnAboutUnknownQueues(null, [], [], pino({ level: 'warn' }, all));
    expect(all.text()).toBe('');
  });
});
