// The task behind `npm start`'s demo source: it logs the event it was given and
// completes. A custom task module default-exports `{ run, ...policy }` (or just a function);
// jobs fanned out from a webhook get the parsed body as `payload` and the event as `ctx.event`.
//
// One event type fails on purpose, for the README's tour of the dashboard:
// `npx mailroom send-test --source demo --type demo.fail` stands for a call to an endpoint
// that is down for a minute. Its job fails with `Permanent` (dead at once, no retries to
// wait through); replayed after that minute, it succeeds.

import { Permanent } from 'mailroom';

/** How long the pretend endpoint stays down after a demo.fail event arrives. */
const OUTAGE_MS = 60_000;

export default {
  maxAttempts: 3,
  async run(payload, ctx) {
    const receivedAt = ctx.event?.receivedAt?.getTime() ?? 0;
    if (ctx.event?.type === 'demo.fail' && Date.now() - receivedAt < OUTAGE_MS) {
      const backAt = new Date(receivedAt + OUTAGE_MS).toISOString();
      throw new Permanent(`demo endpoint unavailable (HTTP 503) until ${backAt}; replay the job after that`);
    }
    ctx.log.info(
      { eventId: ctx.event?.id, source: ctx.event?.source, eventType: ctx.event?.type, message: payload?.data?.message },
      'demo task handled the event: job done',
    );
  },
};
