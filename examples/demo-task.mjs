// The task behind `npm start`'s demo source: it logs the event it was given and
// completes. A custom task module default-exports `{ run, ...policy }` (or just a function);
// jobs fanned out from a webhook get the parsed body as `payload` and the event as `ctx.event`.

export default {
  maxAttempts: 3,
  async run(payload, ctx) {
    ctx.log.info(
      { eventId: ctx.event?.id, source: ctx.event?.source, eventType: ctx.event?.type, message: payload?.data?.message },
      'demo task handled the event: job done',
    );
  },
};
