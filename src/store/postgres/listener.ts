// LISTEN on one dedicated connection (never a pooled one: a pooled client is handed to
// other queries and its LISTEN would leak or vanish with it). When that connection drops
// (server restart, failover, pg_terminate_backend, a dead TCP path found by the
// heartbeat) it reconnects with jittered exponential backoff and then reports a "maybe
// missed something" wake-up, since notifications sent while it was away are gone.

import pg from 'pg';
import { interpretPgError } from './interpret-error.js';

export interface PgListenerOptions {
  /** node-postgres client config for the dedicated connection. */
  readonly connection: pg.ClientConfig;
  readonly channel: string;
  /** A notification's payload, or null after a reconnect (anything may have been missed). */
  readonly onNotify: (payload: string | null) => void;
  /** First reconnect delay; doubles per failed try. @default 100 */
  readonly reconnectBaseMs?: number;
  /** Longest reconnect delay. @default 5000 */
  readonly reconnectMaxMs?: number;
  /** A `SELECT 1` this often finds a half-open connection that would never see a NOTIFY again. @default 30000 */
  readonly heartbeatMs?: number;
}

/** 100 ms: a restarted server is usually back within a few tries; 5 s caps the wait after a long outage. */
const DEFAULT_RECONNECT_BASE_MS = 100;
const DEFAULT_RECONNECT_MAX_MS = 5_000;
/** 30 s: well inside common idle-connection cutoffs of NATs and load balancers. */
const DEFAULT_HEARTBEAT_MS = 30_000;

export class PgListener {
  private client: pg.Client | null = null;
  private isStopped = false;
  private failedTries = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** How many times the connection was re-established after a drop (for tests and logs). */
  reconnects = 0;

  constructor(private readonly options: PgListenerOptions) {}

  /** Connects and LISTENs; rejects (StoreUnavailableError) when the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
    const heartbeatMs = this.options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.heartbeatTimer = setInterval(() => this.heartbeat(), heartbeatMs);
    this.heartbeatTimer.unref();
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.reconnectTimer = null;
    this.heartbeatTimer = null;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.options.connection, keepAlive: true });
    // Attached before connect: an 'error' without a listener would crash the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel === this.options.channel) this.options.onNotify(message.payload ?? null);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdentifier(this.options.channel)}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw interpretPgError(error);
    }
    if (this.isStopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.isStopped || this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.isStopped || this.reconnectTimer) return;
    const base = this.options.reconnectBaseMs ?? DEFAULT_RECONNECT_BASE_MS;
    const max = this.options.reconnectMaxMs ?? DEFAULT_RECONNECT_MAX_MS;
    const ceiling = Math.min(max, base * 2 ** Math.min(this.failedTries, 16));
    // Equal jitter: many workers that lost one server do not all come back in lockstep.
    const delayMs = ceiling / 2 + Math.random() * (ceiling / 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect().then(
        () => {
          if (this.isStopped) return;
          this.failedTries = 0;
          this.reconnects += 1;
          this.options.onNotify(null);
        },
        () => {
          this.failedTries += 1;
          this.scheduleReconnect();
        },
      );
    }, delayMs);
    this.reconnectTimer.unref();
  }

  private heartbeat(): void {
    const client = this.client;
    if (!client) return;
    client.query('SELECT 1').catch(() => this.lost(client));
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
