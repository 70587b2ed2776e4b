/**
 * A TCP connection for TLS that keeps the first 5 bytes the server sent: Go
 * decides its wording of a failed handshake from that record header
 * (crypto/tls RecordHeaderError, net/http's ErrSchemeMismatch), while
 * OpenSSL only says `wrong version number`. Node's TLS runs over this Duplex
 * as over any stream; bytes pass through unchanged.
 */
import type net from 'node:net';
import { Duplex } from 'node:stream';

const recordTypeAlert = 21;
const recordTypeHandshake = 22;

export class RecordTap extends Duplex {
  readonly #raw: net.Socket;
  #head: Buffer = Buffer.alloc(0);

  constructor(raw: net.Socket) {
    super();
    this.#raw = raw;
    raw.on('data', (data: Buffer) => {
      if (this.#head.length < 5) this.#head = Buffer.concat([this.#head, data]).subarray(0, 5);
      if (!this.push(data)) raw.pause();
    });
    raw.on('end', () => this.push(null));
    raw.on('error', (err: Error) => this.destroy(err));
    // A connection that is gone is gone for the TLS socket above too (an
    // HTTP/2 session otherwise waits on a half-open stream until the timeout).
    raw.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
  }

  /**
   * What Go says when the server's first record header is not TLS
   * (crypto/tls readRecordOrCCS before a version is agreed), or undefined.
   */
  recordHeaderError(): string | undefined {
    const head = this.#head;
    if (head.length < 5) return undefined;
    const type = head[0];
    const version = ((head[1] ?? 0) << 8) | (head[2] ?? 0);
    if (type === recordTypeAlert || type === recordTypeHandshake) {
      if (version < 0x1000) return undefined;
    }
    // net/http client.go: a record header reading "HTTP/" is ErrSchemeMismatch.
    if (head.toString('latin1') === 'HTTP/') return 'http: server gave HTTP response to HTTPS client';
    return 'tls: first record does not look like a TLS handshake';
  }

  override _read(): void {
    this.#raw.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#raw.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#raw.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#raw.destroy();
    callback(error);
  }
}
