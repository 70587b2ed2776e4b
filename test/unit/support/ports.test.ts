// claimPort(): ports below the ephemeral range, one claimant per port on the machine (an
// abstract Unix socket held for the claim), a port something listens on is skipped.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { test } from 'node:test';
import { claimLoopbackBlock, claimPort, claimRange, ephemeralFloor, heldPorts, LOOPBACK_BLOCKS, releasePort } from '../../support/ports/index.ts';

/** Runs `f` with claimPort's random start fixed at `port`. */
async function startingAt<T>(port: number, f: () => Promise<T>): Promise<T> {
  const { first, last } = claimRange();
  const random = Math.random;
  Math.random = () => (port - first + 0.5) / (last - first + 1);
  try {
    return await f();
  } finally {
    Math.random = random;
  }
}

void test('every claimed port lies below the ephemeral range, and no two claims of this process are the same', async () => {
  const floor = ephemeralFloor();
  const ports = await Promise.all(Array.from({ length: 40 }, () => claimPort()));
  try {
    assert.equal(new Set(ports).size, ports.length);
    for (const p of ports) assert.ok(p >= claimRange().first && p < floor, `${p} is not below ${floor}`);
    assert.deepEqual(new Set(heldPorts()), new Set(ports));
  } finally {
    for (const p of ports) releasePort(p);
  }
  assert.deepEqual(heldPorts(), []);
});

void test('a port another process claimed is never handed out while it holds it, and is once it ends', async () => {
  // The other process claims every port of a small window by holding its lock socket.
  const { first } = claimRange();
  const window = Array.from({ length: 3 }, (_, i) => first + i);
  const child = spawn(process.execPath, ['-e', `
    const net = require('node:net');
    let n = 0;
    for (const p of ${JSON.stringify(window)}) net.createServer().listen({ path: '\\0outprobe-port-' + p }, () => { if (++n === ${window.length}) console.log('held'); });
    setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve) => child.stdout.once('data', () => { resolve(); }));
    // The scan starts at the window's first port (its start is random otherwise).
    const got = await startingAt(window[0]!, () => claimPort());
    releasePort(got);
    assert.equal(got, window.at(-1)! + 1, 'the first port after the other process\'s');
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  // Its locks went with it: the kernel released them.
  const lock = net.createServer();
  await new Promise<void>((resolve, reject) => { lock.once('error', reject); lock.listen({ path: `\0outprobe-port-${window[0]!}` }, resolve); });
  lock.close();
});

void test('a port something listens on is skipped', async () => {
  const { first, last } = claimRange();
  // Occupy a port in the range with a plain listener (no claim), then claim until the scan passes it.
  const busy = net.createServer();
  const port = first + Math.floor((last - first) / 2);
  await new Promise<void>((resolve, reject) => { busy.once('error', reject); busy.listen(port, '127.0.0.1', resolve); });
  try {
    const got = await startingAt(port, () => claimPort());
    releasePort(got);
    assert.equal(got, port + 1, `${port} is skipped while something listens on it`);
  } finally {
    busy.close();
  }
});

void test('loopback blocks: each claim its own 127.X, none another process holds', async () => {
  const { first } = LOOPBACK_BLOCKS;
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen({ path: '\\0outprobe-lo-${first}' }, () => console.log('held')); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve) => child.stdout.once('data', () => { resolve(); }));
    const random = Math.random;
    Math.random = () => 0; // the scan starts at the first block, which the other process holds
    let a: number;
    try {
      a = await claimLoopbackBlock();
    } finally {
      Math.random = random;
    }
    const b = await claimLoopbackBlock();
    assert.equal(a, first + 1);
    assert.notEqual(a, b);
    assert.ok(b >= LOOPBACK_BLOCKS.first && b <= LOOPBACK_BLOCKS.last);
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
});
