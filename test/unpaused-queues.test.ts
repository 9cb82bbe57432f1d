// The paused-queue rule both stores share (store/unpaused-queues.ts): which queues a claim
// reads while a queue is paused, and when "nothing paused" may be kept for a second.
import { describe, expect, it } from 'vitest';
import { QUEUES_NAMED_AT_MOST, UnpausedQueues, unpausedOf } from '../src/store/unpaused-queues.js';

describe('UnpausedQueues', () => {
  it('keeps "nothing paused" for a while, and reads again after a pause made here', () => {
    const unpaused = new UnpausedQueues();
    const first = unpaused.readToken();
    expect(first).not.toBeNull();
    expect(unpaused.afterPausedRead(null, new Set(), first!)).toBeNull();
    expect(unpaused.readToken()).toBeNull();
    unpaused.forget();
    expect(unpaused.readToken()).not.toBeNull();
  });

  it('does not keep "nothing paused" from a read that began before a pause made here', () => {
    const unpaused = new UnpausedQueues();
    const token = unpaused.readToken()!;
    unpaused.forget(); // the pause commits while the read is out
    expect(unpaused.afterPausedRead(['a'], new Set(), token)).toEqual(['a']);
    expect(unpaused.readToken()).not.toBeNull();
  });

  it('drops paused queues from named ones, and asks for the pending queues when none are named', () => {
    const unpaused = new UnpausedQueues();
    const paused = new Set(['email']);
    expect(unpaused.afterPausedRead(['email', 'sms'], paused, unpaused.readToken()!)).toEqual(['sms']);
    expect(unpaused.afterPausedRead(null, paused, unpaused.readToken()!)).toBeUndefined();
    // While something is paused, every claim reads the pauses again.
    expect(unpaused.readToken()).not.toBeNull();
  });

  it('names the unpaused queues with pending jobs only when a paused one has some and they are few', () => {
    const paused = new Set(['email']);
    expect(unpausedOf(['default', 'email', 'sms'], paused)).toEqual(['default', 'sms']);
    expect(unpausedOf(['default', 'sms'], paused)).toBeNull();
    const many = ['email', ...Array.from({ length: QUEUES_NAMED_AT_MOST }, (_, i) => `q${i}`)];
    expect(unpausedOf(many, paused)).toBeNull();
  });
});
