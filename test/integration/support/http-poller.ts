// A client for measuring Service routing: sends GET <url> over a new connection
// every `intervalMs` and prints one line per request, "<startMs> <endMs> <result>",
// where result is the response body or ERR:<code>. Run inside a node namespace
// (`ip netns exec <ns> node http-poller.ts <url> <intervalMs> <maxSeconds>`); stops
// when stdin closes (its parent is gone) or after maxSeconds.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const [url = '', intervalArg = '5', maxArg = '300'] = process.argv.slice(2);
const intervalMs = Number(intervalArg);
const deadline = Date.now() + Number(maxArg) * 1000;
const state = { stopped: false };
process.stdin.on('end', () => { state.stopped = true; });
process.stdin.resume();

function once(): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 500 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => { resolve(body.trim() === '' ? `HTTP:${res.statusCode ?? 0}` : body.trim()); });
    });
    req.on('timeout', () => { req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })); });
    req.on('error', (err: NodeJS.ErrnoException) => { resolve(`ERR:${err.code ?? err.message}`); });
  });
}

while (!state.stopped && Date.now() < deadline) {
  const start = Date.now();
  const result = await once();
  process.stdout.write(`${start} ${Date.now()} ${result}\n`);
  await sleep(intervalMs);
}
process.exit(0);
