import assert from 'node:assert/strict';
import type http2 from 'node:http2';
import zlib from 'node:zlib';
import { after, describe, it } from 'node:test';
import { createGrpcProber } from '../../../src/probing/grpc/index.ts';
import type { GrpcProbeRequest } from '../../../src/probing/request.ts';
import { grpcGoServer } from '../../support/grpc-go.ts';
import { rawH2Server } from '../../support/grpc-servers.ts';

const probe = createGrpcProber({ userAgent: 'kube-probe/1.37' });
const req = (port: number): GrpcProbeRequest => ({ ip: '127.0.0.1', port, service: '', timeoutMs: 3000 });
const healthy = { kind: 'success', output: 'service healthy' };
const rpcFailed = (desc: string): { kind: 'failure'; output: string } => ({ kind: 'failure', output: `error: health rpc probe failed: rpc error: ${desc}` });

/** A reply whose one message carries `flag` and `payload` under `grpc-encoding: encoding`. */
function reply(encoding: string, flag: number, payload: Buffer) {
  return (stream: http2.ServerHttp2Stream): void => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-encoding': encoding }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    const head = Buffer.alloc(5);
    head[0] = flag;
    head.writeUInt32BE(payload.length, 1);
    stream.end(Buffer.concat([head, payload]));
  };
}

const serving = Buffer.from([0x08, 1]);
const gz = zlib.gzipSync(serving);
const limit = 4 * 1024 * 1024;
/** status SERVING, then an unknown bytes field that pads the message to `size` bytes. */
function padded(size: number): Buffer {
  const lengthBytes = 4; // varint of a length below 2^28
  const pad = size - serving.length - 1 - lengthBytes;
  const varint = [(pad & 0x7f) | 0x80, ((pad >> 7) & 0x7f) | 0x80, ((pad >> 14) & 0x7f) | 0x80, pad >> 21];
  return Buffer.concat([serving, Buffer.from([0x12, ...varint]), Buffer.alloc(pad)]);
}
/** A gzip member with the optional header fields `flags` asks for (FHCRC right or wrong). */
function member(flags: number, name: string, headerCrcRight = true): Buffer {
  const parts = [Buffer.from([0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 255])];
  if ((flags & 4) !== 0) parts.push(Buffer.from([3, 0, 1, 2, 3]));
  if ((flags & 8) !== 0) parts.push(Buffer.from(`${name}\0`, 'latin1'));
  if ((flags & 16) !== 0) parts.push(Buffer.from('comment\0', 'latin1'));
  let head = Buffer.concat(parts);
  if ((flags & 2) !== 0) {
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE((zlib.crc32(head) & 0xffff) ^ (headerCrcRight ? 0 : 1));
    head = Buffer.concat([head, crc]);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(zlib.crc32(serving), 0);
  trailer.writeUInt32LE(serving.length, 4);
  return Buffer.concat([head, zlib.deflateRawSync(serving), trailer]);
}
const badCrc = Buffer.from(gz);
badCrc[badCrc.length - 6] = (badCrc[badCrc.length - 6] ?? 0) ^ 0xff;

describe('gRPC probe: compressed replies, as the kubelet (grpc-go with gzip registered) reads them', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    await Promise.all(cleanup.map((c) => c()));
  });

  it('a real grpc-go server that compresses every reply with gzip: healthy, and a compressed NOT_SERVING is read too', async () => {
    const up = await grpcGoServer({ gzip: true });
    cleanup.push(up.close);
    assert.deepEqual(await probe(req(up.port)), healthy);
    const down = await grpcGoServer({ gzip: true, status: 'NOT_SERVING' });
    cleanup.push(down.close);
    assert.deepEqual(await probe(req(down.port)), { kind: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
  });

  // Each expected output was recorded from the kubelet's own prober
  // (k8s.io/kubernetes v1.37.2 pkg/probe/grpc, gzip linked as in the
  // kubelet binary) against the same server.
  const cases: readonly (readonly [string, string, number, Buffer, unknown])[] = [
    ['gzip message', 'gzip', 1, gz, healthy],
    ['uncompressed message under grpc-encoding gzip', 'gzip', 0, serving, healthy],
    ['two gzip members (multistream; last status wins)', 'gzip', 1, Buffer.concat([zlib.gzipSync(Buffer.from([0x08, 2])), gz]), healthy],
    ['exactly 4 MiB once decompressed', 'gzip', 1, zlib.gzipSync(padded(limit)), healthy],
    ['4 MiB + 1 once decompressed (a zip bomb is cut there)', 'gzip', 1, zlib.gzipSync(padded(limit + 1)), rpcFailed('code = ResourceExhausted desc = grpc: received message after decompression larger than max 4194304')],
    ['FEXTRA, FNAME (Latin-1), FCOMMENT and a right FHCRC', 'gzip', 1, member(2 | 4 | 8 | 16, 'name\xe9'), healthy],
    ['a wrong header CRC', 'gzip', 1, member(2 | 8, 'n', false), rpcFailed('code = Internal desc = grpc: failed to decompress the message: gzip: invalid header')],
    ['a 511-byte name fits Go\'s header buffer', 'gzip', 1, member(8, 'x'.repeat(511)), healthy],
    ['a 512-byte name does not', 'gzip', 1, member(8, 'x'.repeat(512)), rpcFailed('code = Internal desc = grpc: failed to decompress the message: gzip: invalid header')],
    ['a name without its NUL', 'gzip', 1, Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 255, 0x61, 0x62, 0x63]), rpcFailed('code = Internal desc = grpc: failed to decompress the message: unexpected EOF')],
    ['encoding names are case-sensitive', 'GZIP', 1, gz, rpcFailed('code = Internal desc = grpc: Decompressor is not installed for grpc-encoding "GZIP"')],
    ['an encoding the kubelet has no decompressor for', 'br', 1, gz, rpcFailed('code = Internal desc = grpc: Decompressor is not installed for grpc-encoding "br"')],
    ['deflate is not registered either', 'deflate', 1, zlib.deflateSync(serving), rpcFailed('code = Internal desc = grpc: Decompressor is not installed for grpc-encoding "deflate"')],
    ['an unknown encoding on an uncompressed message is ignored', 'br', 0, serving, healthy],
    ['compressed flag under identity', 'identity', 1, gz, rpcFailed('code = Internal desc = grpc: compressed flag set with identity or empty encoding')],
    ['not gzip at all', 'gzip', 1, Buffer.from('not gzip at all'), rpcFailed('code = Internal desc = grpc: failed to decompress the message: gzip: invalid header')],
    ['an empty compressed message', 'gzip', 1, Buffer.alloc(0), rpcFailed('code = Internal desc = grpc: failed to decompress the message: EOF')],
    ['a member cut inside its trailer', 'gzip', 1, gz.subarray(0, gz.length - 4), rpcFailed('code = Internal desc = grpc: failed to read decompressed data: unexpected EOF')],
    ['a member cut inside its data', 'gzip', 1, gz.subarray(0, 12), rpcFailed('code = Internal desc = grpc: failed to read decompressed data: unexpected EOF')],
    ['a wrong CRC-32', 'gzip', 1, badCrc, rpcFailed('code = Internal desc = grpc: failed to read decompressed data: gzip: invalid checksum')],
    ['3 bytes after the member (a short next header)', 'gzip', 1, Buffer.concat([gz, Buffer.from('xyz')]), rpcFailed('code = Internal desc = grpc: failed to read decompressed data: unexpected EOF')],
    ['a decompressed message that is not protobuf', 'gzip', 1, zlib.gzipSync(Buffer.from([0xff, 0xff])), rpcFailed('code = Internal desc = grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data')],
  ];
  for (const [name, encoding, flag, payload, expected] of cases) {
    it(name, async () => {
      const s = await rawH2Server(reply(encoding, flag, payload));
      cleanup.push(s.close);
      assert.deepEqual(await probe(req(s.port)), expected);
    });
  }

  it('10 garbage bytes after the member are an invalid next header', async () => {
    const s = await rawH2Server(reply('gzip', 1, Buffer.concat([gz, Buffer.from('0123456789')])));
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), rpcFailed('code = Internal desc = grpc: failed to read decompressed data: gzip: invalid header'));
  });

  it('corrupt deflate data fails as corrupt input (Go also names a byte offset, which zlib does not report)', async () => {
    const corrupt = Buffer.concat([gz.subarray(0, 10), Buffer.from([0xff, 0xff, 0xff, 0xff]), gz.subarray(14)]);
    const s = await rawH2Server(reply('gzip', 1, corrupt));
    cleanup.push(s.close);
    assert.deepEqual(await probe(req(s.port)), rpcFailed('code = Internal desc = grpc: failed to read decompressed data: flate: corrupt input (invalid block type)'));
  });
});
