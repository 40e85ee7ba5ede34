import { EventEmitter } from 'node:events';
import pg from 'pg';
import { BoardConnectionError } from './connection-error.js';

/**
 * One dedicated connection that LISTENs on the board's channel and reports each notification's
 * payload (`task:<id>`, `doc:<key>`, `inbox:<name>`). A lost connection is reopened with backoff;
 * `reconnected` tells the replicas to catch up on what they may have missed meanwhile.
 */
export class PgListener extends EventEmitter<{ notification: [string]; reconnected: []; error: [Error] }> {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = 100;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly url: string) {
    super();
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (message) => {
      if (message.payload) this.emit('notification', message.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query('LISTEN autoteam');
    if (this.closed) {
      // Closed while this connection was being made (a reconnect in flight): left open, it would
      // keep the process alive for good.
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = 100;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().then(
        () => {
          if (!this.closed) this.emit('reconnected');
        },
        (error: Error) => {
          if (this.closed) return;
          // One line naming the board, as every statement's failure does (BoardConnectionError), not the driver's words alone.
          this.emit('error', new BoardConnectionError(this.url, error));
          this.retryMs = Math.min(this.retryMs * 2, 5_000);
          this.reconnectLater();
        },
      );
    }, this.retryMs);
    // Not unref'd: while the server is away, reconnecting is what this process is waiting for.
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
