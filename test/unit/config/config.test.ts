import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/index.ts';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const r = loadConfig([], { POD_NAME: 'outprobe-0' });
    assert.ok(r.ok);
    assert.equal(r.config.identity, 'outprobe-0');
    assert.equal(r.config.metricsPort, 8080);
    assert.equal(r.config.metricsHost, '0.0.0.0');
    assert.equal(r.config.concurrency, 256);
    assert.equal(r.config.execEnabled, false);
    assert.deepEqual(r.config.allowedCidrs, []);
    assert.equal(r.config.statusIntervalMs, 2000);
    assert.equal(r.config.maxProbeTimeoutSeconds, 60);
  });

  it('--max-probe-timeout [OUTPROBE_MAX_PROBE_TIMEOUT] sets the longest probe timeout, at least 1 s', () => {
    const fromFlag = loadConfig(['--max-probe-timeout', '10'], { OUTPROBE_MAX_PROBE_TIMEOUT: '20' });
    assert.ok(fromFlag.ok);
    assert.equal(fromFlag.config.maxProbeTimeoutSeconds, 10);
    const fromEnv = loadConfig([], { OUTPROBE_MAX_PROBE_TIMEOUT: '20' });
    assert.ok(fromEnv.ok);
    assert.equal(fromEnv.config.maxProbeTimeoutSeconds, 20);
    const bad = loadConfig(['--max-probe-timeout', '0'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /maxProbeTimeoutSeconds/);
  });

  it('flags win over environment variables', () => {
    const r = loadConfig(['--concurrency', '64', '--enable-exec-probes', '--metrics-addr', '127.0.0.1:0'], { OUTPROBE_CONCURRENCY: '8', OUTPROBE_ALLOWED_PROBE_CIDRS: '127.0.0.0/8, ::1/128' });
    assert.ok(r.ok);
    assert.equal(r.config.concurrency, 64);
    assert.equal(r.config.execEnabled, true);
    assert.equal(r.config.metricsHost, '127.0.0.1');
    assert.equal(r.config.metricsPort, 0);
    assert.deepEqual(r.config.allowedCidrs, ['127.0.0.0/8', '::1/128']);
  });

  it('rejects bad values with a message naming the setting', () => {
    const r = loadConfig(['--concurrency', '0', '--log-level', 'loud'], {});
    assert.ok(!r.ok);
    assert.match(r.message, /concurrency/);
    assert.match(r.message, /logLevel/);
  });

  it('rejects unknown flags and offers --help', () => {
    const bad = loadConfig(['--frobnicate'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /frobnicate/);
    const help = loadConfig(['--help'], {});
    assert.ok(!help.ok && help.help);
    assert.match(help.message, /--enable-exec-probes/);
  });
});
