import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ReportSender, batchBody, httpSendBatch, vantageReportEndpoint, vantageReportPath } from '../../../src/vantage/index.ts';
import type { ReportBatch } from '../../../src/vantage/index.ts';

void describe('POST /v1/vantage-reports (ADR 0058)', () => {
  const accepted: ReportBatch[] = [];
  const state = { from: 'r2' };
  const handler = vantageReportEndpoint({
    authorize: (auth) => Promise.resolve(auth === 'Bearer good' ? { status: 200, message: '' } : { status: 401, message: 'Unauthorized' }),
    isFrom: (from) => from === state.from,
    accept: (b) => void accepted.push(b),
  });
  const server = createServer((req, res) => void handler(req, res));
  let address = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const post = async (body: string, token = 'good'): Promise<number> => {
    const res = await fetch(`http://${address}${vantageReportPath}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    await res.body?.cancel();
    return res.status;
  };
  const batch = (from: string): string => batchBody({ from, reports: [{ policy: 'shop/web', podUid: 'uid-1', result: 'failure', message: 'timeout' }] });

  void it('takes an authenticated batch from the member at the caller\'s address', async () => {
    assert.equal(await post(batch('r2')), 200);
    assert.deepEqual(accepted.at(-1), { from: 'r2', reports: [{ policy: 'shop/web', podUid: 'uid-1', result: 'failure', message: 'timeout' }] });
  });

  void it('refuses a stranger (401), a batch that names another replica (403), a malformed one (400), and takes nothing from them', async () => {
    const n = accepted.length;
    assert.equal(await post(batch('r2'), 'bad'), 401);
    assert.equal(await post(batch('r3')), 403);
    assert.equal(await post('{"from":"r2","reports":[{"policy":"x","podUID":"u","result":"maybe"}]}'), 400);
    assert.equal(await post('not json'), 400);
    assert.equal(accepted.length, n);
  });

  void it('the sender batches per owner, latest verdict wins, and queues a failed batch again', async () => {
    let ok = false;
    const sent: string[] = [];
    const sender = new ReportSender({
      identity: 'r2',
      addressOf: (id) => (id === 'gone' ? undefined : address),
      send: (addr, body) => {
        sent.push(body);
        return ok ? httpSendBatch(() => 'good')(addr, body) : Promise.resolve(false);
      },
    });
    sender.queue('r1', { policy: 'shop/web', podUid: 'uid-1', result: 'success', message: '' });
    sender.queue('r1', { policy: 'shop/web', podUid: 'uid-1', result: 'failure', message: 'x' });
    sender.queue('gone', { policy: 'shop/web', podUid: 'uid-2', result: 'failure', message: 'x' });
    await sender.flush();
    assert.equal(sent.length, 1);
    assert.equal(sender.pending, 1, 'the failed batch waits; the gone owner\'s queue is dropped');
    ok = true;
    await sender.flush();
    assert.equal(sender.pending, 0);
    assert.deepEqual(accepted.at(-1)?.reports.map((r) => r.result), ['failure']);
  });
});
