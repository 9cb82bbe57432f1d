// PostgreSQL-only: two secret rotations of one endpoint that start together. Both are held
// at the endpoint's row (another session holds its lock), then released at once; the
// rotation's check must read the row the first one wrote, so exactly one goes through and
// the original secret is not dropped. SQLite runs one writer at a time, so the race cannot
// happen there; the conformance suite covers the refusal itself on both stores.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL secret rotations that start together', () => {
  afterEach(() => closeTestMailrooms(postgresHarness));

  it('let exactly one through when both waited on the endpoint row', async () => {
    const { mr, url } = await openTestMailroom(postgresHarness);
    const schema = new URL(url).searchParams.get('schema')!;
    const id = (await mr.store.endpointAdd({ tenant: 'acme', url: 'http://127.0.0.1:9/x', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_b3JpZ2luYWwgc2VjcmV0IG9mIHRoZSB0ZXN0', addedBy: 'operator' })).id;
    const holder = await connectClient();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".mailroom_endpoint WHERE id = $1 FOR UPDATE`, [id]);
      const rotations = [0, 1].map((i) => mr.store.endpointRotateSecret({ id, secret: `whsec_${Buffer.from(`rotation ${i}`).toString('base64')}`, overlapMs: 60_000 }));
      // Both wait on the row lock before it is released.
      await waitFor(async () => {
        const { rows } = await holder.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')");
        return rows[0].n >= 2;
      }, { timeoutMs: 5_000, description: 'both rotations to wait on the endpoint row' });
      await holder.query('COMMIT');
      const results = await Promise.all(rotations);
      expect(results.filter((result) => result?.rotated)).toHaveLength(1);
      expect(results.filter((result) => result && !result.rotated)).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });
});
