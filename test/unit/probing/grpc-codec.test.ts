import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { service as healthService } from 'grpc-health-check';
import {
  decodeGrpcMessage, decodeHealthCheckResponse, encodeGrpcTimeout, encodeRequest, maxResponseMessageBytes,
} from '../../../src/probing/grpc/codec.ts';
import { ResponseReader, decodeResponseBody } from '../../../src/probing/grpc/reader.ts';

const frame = (msg: number[] | Buffer, flag = 0): Buffer => {
  const m = Buffer.from(msg);
  const f = Buffer.alloc(5 + m.length);
  f.writeUInt8(flag, 0);
  f.writeUInt32BE(m.length, 1);
  m.copy(f, 5);
  return f;
};

/** The protobuf codec grpc-js itself uses for grpc.health.v1 (proto-loader over protobufjs). */
const reference = healthService['Check']!;

describe('HealthCheckRequest encoding', () => {
  it('frames an empty service as a zero-length message', () => {
    assert.deepEqual([...encodeRequest('')], [0, 0, 0, 0, 0]);
  });

  it('writes field 1 with a varint length and UTF-8 bytes', () => {
    assert.deepEqual([...encodeRequest('db')], [0, 0, 0, 0, 4, 0x0a, 2, 0x64, 0x62]);
  });

  it('matches the grpc-js/protobufjs encoding, including multi-byte lengths and non-ASCII names', () => {
    // protobufjs writes an empty string field; protobuf-go (the kubelet) omits it, as encodeRequest does.
    assert.deepEqual(reference.requestDeserialize(encodeRequest('').subarray(5)), { service: '' });
    for (const service of ['grpc.health.v1.Health', 'ünïcødé-サービス', 'x'.repeat(127), 'y'.repeat(128), 'z'.repeat(20_000)]) {
      const expected = reference.requestSerialize({ service });
      assert.deepEqual(encodeRequest(service), frame(expected), `service of ${service.length} chars`);
    }
  });
});

describe('HealthCheckResponse decoding', () => {
  it('reads each status as grpc-js encodes it', () => {
    for (const [name, value] of [['UNKNOWN', 0], ['SERVING', 1], ['NOT_SERVING', 2], ['SERVICE_UNKNOWN', 3]] as const) {
      assert.deepEqual(decodeResponseBody(frame(reference.responseSerialize({ status: name }))), { status: value });
    }
  });

  it('treats an empty message as UNKNOWN and skips unknown fields of every wire type', () => {
    assert.deepEqual(decodeResponseBody(frame([])), { status: 0 });
    const unknown = [0x10, 0x96, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 2, 0x61, 0x62, 0x2d, 1, 2, 3, 4];
    assert.deepEqual(decodeResponseBody(frame([...unknown, 0x08, 2])), { status: 2 });
  });

  it('keeps the last status when the field repeats, and prints values outside the enum as numbers', () => {
    assert.deepEqual(decodeHealthCheckResponse(Buffer.from([0x08, 1, 0x08, 2])), { status: 2 });
    assert.deepEqual(decodeHealthCheckResponse(Buffer.from([0x08, 7])), { status: 7 });
    assert.deepEqual(decodeHealthCheckResponse(Buffer.from([0x08, 0xff, 0xff, 0xff, 0xff, 0x0f])), { status: -1 });
  });

  it('treats field 1 with another wire type as an unknown field, as protobuf-go does', () => {
    assert.deepEqual(decodeHealthCheckResponse(Buffer.from([0x0a, 1, 0x01])), { status: 0 });
  });

  it('reports the errors grpc-go reports for bad bodies', () => {
    const internal = (message: string): { code: number; message: string } => ({ code: 13, message });
    assert.deepEqual(decodeResponseBody(Buffer.alloc(0)), internal('cardinality violation: received no response message from non-server-streaming RPC'));
    assert.deepEqual(decodeResponseBody(Buffer.from([0, 0, 0])), internal('unexpected EOF'));
    assert.deepEqual(decodeResponseBody(Buffer.from([0, 0, 0, 0, 9, 0x08])), internal('unexpected EOF'));
    assert.deepEqual(decodeResponseBody(frame([0x08, 1], 1)), internal('grpc: compressed flag set with identity or empty encoding'));
    assert.deepEqual(decodeResponseBody(frame([0x08, 1], 7)), internal('grpc: received unexpected payload format 7'));
    const garbage = internal('grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data');
    assert.deepEqual(decodeResponseBody(frame([0x08])), garbage);
    assert.deepEqual(decodeResponseBody(frame([0x0f, 1])), garbage);
    assert.deepEqual(decodeResponseBody(frame([0x00, 1])), garbage);
    assert.deepEqual(decodeResponseBody(frame([0x22, 9, 1])), garbage);
    const http1 = Buffer.from('HTTP/1.1 200 OK\r\n');
    assert.deepEqual(decodeResponseBody(http1), {
      code: 8,
      message: `grpc: received message larger than max (${http1.readUInt32BE(1)} vs. ${maxResponseMessageBytes})`,
    });
    assert.deepEqual(
      decodeResponseBody(Buffer.concat([frame([0x08, 1]), frame([0x08, 1])])),
      internal('cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message'),
    );
  });
});

describe('ResponseReader (the body fed as DATA arrives)', () => {
  const bodies = [
    frame([0x08, 1]), frame([]), frame([0x10, 0x96, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 2, 0x61, 0x62, 0x2d, 1, 2, 3, 4, 0x08, 2]),
    frame([0x08, 0xff, 0xff, 0xff, 0xff, 0x0f]), frame([0x08]), frame([0x0f, 1]), frame([0x22, 9, 1]), frame([0x08, 0x80]), frame([0x08, 1], 1),
    Buffer.from([0, 0, 0]), Buffer.from([0, 0, 0, 0, 9, 0x08]), Buffer.concat([frame([0x08, 1]), frame([0x08, 1])]),
    Buffer.concat([frame([0x08, 1]), Buffer.from([0, 0])]), Buffer.concat([frame([0x08, 1]), Buffer.from([0, 0x7f, 0, 0, 0])]),
    Buffer.concat([frame([0x08, 1]), frame([0xff], 0)]), Buffer.from('HTTP/1.1 200 OK\r\n'),
  ];

  it('gives the same result whether the body arrives whole or one byte per DATA frame', () => {
    for (const body of bodies) {
      const reader = new ResponseReader();
      for (const b of body) reader.push(Buffer.from([b]));
      assert.deepEqual(reader.finish(), decodeResponseBody(body), `body ${body.toString('hex')}`);
    }
  });

  it('decides at the byte where grpc-go fails the call: the length prefix, or the end of a second message', () => {
    const reader = new ResponseReader();
    assert.equal(reader.push(Buffer.from([0, 0, 0x40, 0])), undefined);
    assert.deepEqual(reader.push(Buffer.from([1])), { code: 8, message: 'grpc: received message larger than max (4194305 vs. 4194304)' });
    const twice = new ResponseReader();
    assert.equal(twice.push(frame([0x08, 1])), undefined);
    assert.equal(twice.push(frame([0x08, 1]).subarray(0, 6)), undefined);
    assert.deepEqual(twice.push(Buffer.from([1])), { code: 13, message: 'cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message' });
  });
});

describe('grpc-timeout and grpc-message', () => {
  it('encodes timeouts as grpc-go does (smallest unit within 8 digits, rounded up)', () => {
    assert.equal(encodeGrpcTimeout(0), '0n');
    assert.equal(encodeGrpcTimeout(-5), '0n');
    assert.equal(encodeGrpcTimeout(50), '50000000n');
    assert.equal(encodeGrpcTimeout(1000), '1000000u');
    assert.equal(encodeGrpcTimeout(99.9999), '99999900n');
    assert.equal(encodeGrpcTimeout(999.9999), '1000000u');
    assert.equal(encodeGrpcTimeout(100_000), '100000m');
    assert.equal(encodeGrpcTimeout(3_600_000), '3600000m');
    assert.equal(encodeGrpcTimeout(200_000_000), '200000S');
  });

  it('percent-decodes grpc-message like grpc-go, leaving malformed escapes alone', () => {
    assert.equal(decodeGrpcMessage('plain text'), 'plain text');
    assert.equal(decodeGrpcMessage('a%20b%25c'), 'a b%c');
    assert.equal(decodeGrpcMessage('caf%C3%A9 ok'), 'café ok');
    assert.equal(decodeGrpcMessage('100%zz'), '100%zz');
    assert.equal(decodeGrpcMessage('ends%41'), 'endsA');
    assert.equal(decodeGrpcMessage('ends%4'), 'ends%4');
    assert.equal(decodeGrpcMessage('%41b'), 'Ab');
  });
});
