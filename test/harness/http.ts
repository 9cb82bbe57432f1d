// A real HTTP server on 127.0.0.1 for tests that play the other side of a request (a
// webhook receiver): each request's body read whole, then handed with its response to
// the test's handler; close() drops open connections so no test waits on a keep-alive.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReadRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  close(): Promise<void>;
}

export async function startLoopbackServer(onRequest: (request: ReadRequest, res: ServerResponse) => void): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => onRequest({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks) }, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on now (the OS's pick, released): for a server that must be told its port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
