// The documented 413 at the default MAX_BODY_BYTES (10 MiB), as clients see it (issue 21): for a
// declared length over it (11 MB, 50 MB), for a chunked body, from a client that reads the answer
// only after sending everything (as Python's http.client does) and from fetch; the connection is
// closed after the answer, not reset before it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

const MB = 1_000_000;

/** Sends a raw request and its body in 64 KiB writes, then reads until the server closes. */
function rawRequest(
  url: string,
  head: string,
  body: () => Iterable<Buffer>,
  { readWhileSending }: { readWhileSending: boolean },
) {
  const { hostname, port } = new URL(url);
  return new Promise<{ response: string; closedBy: 'end' | 'error'; error?: string }>((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let response = '';
    let finished = false;
    const done = (closedBy: 'end' | 'error', error?: string) => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ response, closedBy, error });
    };
    socket.on('error', (err: NodeJS.ErrnoException) => done('error', err.code ?? err.message));
    socket.on('end', () => done('end'));
    socket.on('connect', async () => {
      if (!readWhileSending) socket.pause(); // read nothing until the whole body is sent
      socket.write(head);
      for (const chunk of body()) {
        if (finished) return;
        if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
      }
      socket.resume();
    });
    socket.on('data', (d) => (response += d.toString('latin1')));
  });
}

function* bytes(total: number) {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, total - sent));
}

function* chunked(total: number) {
  for (const c of bytes(total))
    yield Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]);
  yield Buffer.from('0\r\n\r\n');
}

const headOf = (length: number | 'chunked') =>
  `POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`}\r\n\r\n`;

describe('413 at the default body limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp(); // MAX_BODY_BYTES unset: 10 MiB
  });
  afterAll(() => app.stop());

  const messages = async () =>
    (await app.db.query<{ n: number }>('select count(*)::int as n from queen.messages'))[0].n;

  for (const size of [11 * MB, 50 * MB]) {
    it(`a declared ${size / MB} MB body, the answer read only after sending it all: 413, then the connection closed`, async () => {
      const r = await rawRequest(app.server.url, headOf(size), () => bytes(size), { readWhileSending: false });
      expect(r.error).toBeUndefined();
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.response.toLowerCase()).toContain('connection: close');
      expect(r.response).toContain('request body exceeds 10485760 bytes');
      expect(r.closedBy).toBe('end');
    });

    it(`a declared ${size / MB} MB body read while sending: 413`, async () => {
      const r = await rawRequest(app.server.url, headOf(size), () => bytes(size), { readWhileSending: true });
      expect(r.error).toBeUndefined();
      expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.closedBy).toBe('end');
    });
  }

  it('an 11 MB chunked body: 413, then the connection closed', async () => {
    const r = await rawRequest(app.server.url, headOf('chunked'), () => chunked(11 * MB), { readWhileSending: false });
    expect(r.error).toBeUndefined();
    expect(r.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.closedBy).toBe('end');
  });

  it('fetch with an 11 MB and a 50 MB body gets the 413, not a reset; nothing is stored', async () => {
    for (const size of [11 * MB, 50 * MB]) {
      const res = await fetch(`${app.server.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.alloc(size, 0x20),
      });
      expect(res.status).toBe(413);
      expect((await res.json()).error).toBe('request body exceeds 10485760 bytes');
    }
    expect(await messages()).toBe(0);
  });

  it('a body under the limit on the same kind of connection is still served', async () => {
    const res = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ queue: 'limit.ok', payload: 'x'.repeat(5 * MB) }] }),
    });
    expect(res.status).toBe(201);
  });
});
