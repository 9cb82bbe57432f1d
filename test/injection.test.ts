// Hostile strings through every filter an operator or a caller can type: listJobs,
// listEvents, filtered replay and retryNow, and the CLI commands on top of them, on both
// stores. Each filter must match its value literally (a quote, a wildcard or a comment is
// just a character), leave every other row alone, and never reach the SQL text: the
// drivers' prepare/query calls are watched while the corpus runs, and a statement whose
// text holds a corpus value fails the test, whichever path built it.

import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storeHarnesses } from './harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from './harness/mailroom.js';
import { insertJob } from './harness/factory.js';
import { removeTempDirs, runJson } from './cli/run-command.js';

/** Every corpus value carries this marker, so a value in SQL text is found exactly. */
const MARK = 'MRX7q';
const CORPUS = [
  `${MARK}'`,
  `${MARK}' OR '1'='1`,
  `${MARK}"; DROP TABLE mailroom_job; --`,
  `${MARK}' UNION SELECT id, payload FROM mailroom_event --`,
  `${MARK}%`,
  `${MARK}_`,
  `${MARK}\\`,
  `${MARK}$1`,
  `${MARK}@now`,
  `${MARK}:type`,
  `${MARK}?`,
  `${MARK}*/ /*`,
  `${MARK}\n-- next line`,
  `${MARK}ø 😀 ‮`,
  `${MARK}${'x'.repeat(4_000)}`,
];

// ---- watching the SQL text the drivers are given ----
const sqlTexts: string[] = [];
const sqlitePrepare = Database.prototype.prepare;
const pgQuery = pg.Client.prototype.query;
beforeAll(() => {
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    sqlTexts.push(source);
    return sqlitePrepare.call(this, source);
  } as typeof sqlitePrepare;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    sqlTexts.push(typeof config === 'string' ? config : String((config as { text?: string } | null)?.text ?? ''));
    return (pgQuery as (...args: unknown[]) => unknown).call(this, config, ...rest);
  } as typeof pgQuery;
});
afterAll(() => {
  Database.prototype.prepare = sqlitePrepare;
  pg.Client.prototype.query = pgQuery;
});

const TYPES = CORPUS.map((_, index) => `hostile_${index}`);

describe.each(storeHarnesses)('hostile filter values on $name', (harness) => {
  afterEach(async () => {
    removeTempDirs();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('match literally, touch no other row, and never reach the SQL text', async () => {
    const { mr, url } = await openTestMailroom(harness);
    // One job whose type is each hostile value, one dead job whose error holds it, and
    // bystanders that every filter must leave alone.
    const byType = await Promise.all(CORPUS.map((value) => mr.enqueue(value, { n: 1 })));
    const deadByValue = [];
    for (const [index, value] of CORPUS.entries()) {
      deadByValue.push(await insertJob(mr.store, { type: TYPES[index], status: 'dead', error: `Error: ${value}` }));
    }
    const bystanders = [
      await insertJob(mr.store, { type: 'plain', status: 'dead', error: 'Error: plain failure' }),
      await insertJob(mr.store, { type: 'plain', status: 'pending' }),
    ];
    const before = (await mr.stats()).byStatus;
    sqlTexts.length = 0;

    for (const [index, value] of CORPUS.entries()) {
      expect((await mr.listJobs({ type: value })).map((job) => job.id)).toEqual([byType[index]!.id]);
      expect(await mr.listJobs({ source: value })).toEqual([]);
      expect(await mr.listJobs({ queue: value })).toEqual([]);
      // Substring of the error, case-insensitive; a value that is a prefix of another
      // (`MARK'` of `MARK' OR …`) matches both, as a substring should.
      const errorMatches = deadByValue.filter((_, i) => CORPUS[i]!.toLowerCase().includes(value.toLowerCase())).map((job) => job.id);
      expect((await mr.listJobs({ errorContains: value })).map((job) => job.id).sort()).toEqual(errorMatches.sort());
      expect(await mr.listEvents({ source: value })).toEqual([]);
      expect(await mr.listEvents({ type: value })).toEqual([]);
      expect((await mr.retryNow({ type: value })).ids).toEqual([]);
      const cliByType = await runJson<{ jobs: Array<{ id: string }> }>(['jobs', '--db', url, '--type', value, '--json']);
      expect(cliByType.jobs.map((job) => job.id)).toEqual([byType[index]!.id]);
      const cliByError = await runJson<{ jobs: unknown[] }>(['jobs', '--db', url, '--error', `${value}-no-such-error`, '--json']);
      expect(cliByError.jobs).toEqual([]);
    }
    // A filtered replay with every hostile field replays exactly the one dead job it names.
    for (const [index, value] of CORPUS.entries()) {
      const result = await mr.replay({ status: 'dead', type: TYPES[index], errorContains: value }, { reason: value });
      expect(result.ids).toEqual([deadByValue[index]!.id]);
      const detail = (await mr.getJob(deadByValue[index]!.id))!;
      expect(detail.status).toBe('pending');
      expect(detail.replays.at(-1)!.reason).toBe(value);
    }

    // Nothing else moved: the bystanders are as they were, the tables are whole.
    expect((await mr.getJob(bystanders[0]!.id))!.status).toBe('dead');
    expect((await mr.getJob(bystanders[1]!.id))!.status).toBe('pending');
    const after = (await mr.stats()).byStatus;
    expect(after.pending).toBe(before.pending + CORPUS.length);
    expect(after.dead).toBe(before.dead - CORPUS.length);
    expect(sqlTexts.length).toBeGreaterThan(0); // the watch saw the statements ...
    expect(sqlTexts.filter((text) => text.includes(MARK))).toEqual([]); // ... and no value in one
  });
});
