import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig, peerAddress } from '../../../src/config/index.ts';

/** The downward API as the chart sets it (ADR 0036: sharding proves membership against the replica's own pod). */
const inPod = { POD_NAME: 'outprobe-0', POD_NAMESPACE: 'outprobe', POD_UID: 'uid-0', NODE_NAME: 'node-a', POD_IP: '10.1.2.3' };
const load = (argv: readonly string[], env: NodeJS.ProcessEnv): ReturnType<typeof loadConfig> => loadConfig(argv, { ...inPod, ...env });

describe('loadConfig', () => {
  it('self-partition detection: on by default, advertises $POD_IP, thresholds from flags', () => {
    const d = load([], { POD_IP: '10.1.2.3' });
    assert.ok(d.ok);
    assert.equal(d.config.selfCheck, true);
    assert.equal(d.config.advertiseAddress, '10.1.2.3');
    assert.deepEqual(
      [d.config.peerCheckIntervalMs, d.config.peerCheckTimeoutMs, d.config.impairedUnreachableAfterMs, d.config.impairedFailingShare, d.config.impairedFailingMargin, d.config.impairedMinTargets, d.config.impairedRecoverAfterMs],
      [1000, 500, 3000, 0.5, 0.3, 10, 10_000],
    );
    const none = loadConfig(['--membership-proof', 'none'], {});
    assert.ok(none.ok);
    assert.equal(none.config.advertiseAddress, undefined);
    const set = load(['--advertise-address', 'fd00::5', '--self-partition-detection', 'false', '--impaired-unreachable-after', '5', '--impaired-recover-after', '2.5'], { POD_IP: '10.1.2.3' });
    assert.ok(set.ok);
    assert.equal(set.config.advertiseAddress, 'fd00::5');
    assert.equal(set.config.selfCheck, false);
    assert.equal(set.config.impairedUnreachableAfterMs, 5000);
    assert.equal(set.config.impairedRecoverAfterMs, 2500);
    const bad = load(['--impaired-failing-share', '1.5'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /impairedFailingShare/);
  });

  it('second opinion: on by default, allowed users default to none listed (the replica\'s own name), set by flag or env', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.equal(d.config.secondOpinion, true);
    assert.deepEqual(d.config.secondOpinionAllowedUsers, []);
    const set = load(['--second-opinion', 'false', '--second-opinion-allowed-users', 'system:serviceaccount:a:b, system:serviceaccount:a:c,'], {});
    assert.ok(set.ok);
    assert.equal(set.config.secondOpinion, false);
    assert.deepEqual(set.config.secondOpinionAllowedUsers, ['system:serviceaccount:a:b', 'system:serviceaccount:a:c']);
    const env = load([], { OUTPROBE_SECOND_OPINION: 'false' });
    assert.ok(env.ok && !env.config.secondOpinion);
    assert.ok(!load(['--second-opinion', 'maybe'], {}).ok);
  });

  it('membership proof (ADR 0036): pod by default, needing the downward API and the pod\'s name as identity; none refused in a pod', () => {
    const d = load([], {});
    assert.ok(d.ok, d.ok ? '' : d.message);
    assert.equal(d.config.membershipProof, 'pod');
    assert.deepEqual(d.config.self, { podName: 'outprobe-0', namespace: 'outprobe', podUid: 'uid-0', nodeName: 'node-a', podIP: '10.1.2.3' });
    assert.equal(d.config.identity, 'outprobe-0');
    const outside = loadConfig([], {});
    assert.ok(!outside.ok);
    assert.match(outside.message, /needs \$POD_NAME, \$POD_NAMESPACE, \$POD_UID, \$NODE_NAME, \$POD_IP from the downward API; outside a cluster run --sharding=false, or --membership-proof=none/);
    assert.ok(loadConfig(['--sharding', 'false'], {}).ok, 'no sharding, nothing to prove');
    const noNode = loadConfig([], { ...inPod, NODE_NAME: '' });
    assert.ok(!noNode.ok && /\$NODE_NAME/.test(noNode.message));
    const renamed = load(['--identity', 'someone-else'], {});
    assert.ok(!renamed.ok && /the identity is the pod's name/.test(renamed.message));
    const dev = loadConfig(['--membership-proof', 'none'], {});
    assert.ok(dev.ok && dev.config.membershipProof === 'none');
    const inAPod = load(['--membership-proof', 'none'], {});
    assert.ok(!inAPod.ok);
    assert.match(inAPod.message, /refused when \$POD_NAME is set/);
  });

  it('peer channel (ADR 0037): --peer-addr 0.0.0.0:9444, no token file unless given, a 30 s bound on an unavailable second opinion (0: none)', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.deepEqual([d.config.peerHost, d.config.peerPort, d.config.peerTokenFile, d.config.peerPodSelector, d.config.secondOpinionUnavailableAfterMs], ['0.0.0.0', 9444, undefined, undefined, 30_000]);
    const set = load(['--peer-addr', '[::1]:0', '--peer-token-file', '/t/token', '--peer-pod-selector', 'app=x', '--second-opinion-unavailable-after', '0'], {});
    assert.ok(set.ok);
    assert.deepEqual([set.config.peerHost, set.config.peerPort, set.config.peerTokenFile, set.config.peerPodSelector, set.config.secondOpinionUnavailableAfterMs], ['::1', 0, '/t/token', 'app=x', undefined]);
    assert.ok(!load(['--second-opinion-unavailable-after', '-1'], {}).ok);
  });

  it('peerAddress: the listener\'s port unless one is given; IPv6 bracketed', () => {
    assert.equal(peerAddress('10.1.2.3', 8080), '10.1.2.3:8080');
    assert.equal(peerAddress('10.1.2.3:9000', 8080), '10.1.2.3:9000');
    assert.equal(peerAddress('fd00::5', 8080), '[fd00::5]:8080');
    assert.equal(peerAddress('[fd00::5]:9000', 8080), '[fd00::5]:9000');
    assert.equal(peerAddress(undefined, 8080), undefined);
  });

  it('Events have their own budget: --event-qps 50 and --event-burst 100 by default, set by flag or environment', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.deepEqual([d.config.eventQps, d.config.eventBurst], [50, 100]);
    const set = load(['--event-qps', '2.5'], { OUTPROBE_EVENT_BURST: '7' });
    assert.ok(set.ok);
    assert.deepEqual([set.config.eventQps, set.config.eventBurst], [2.5, 7]);
    const bad = load(['--event-qps', '0'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /eventQps/);
  });

  it('gate writes have their own path: --gate-write-max-inflight 64 and --gate-write-qps 1000 by default, set by flag or environment', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.deepEqual([d.config.gateWriteMaxInflight, d.config.gateWriteQps], [64, 1000]);
    const set = load(['--gate-write-max-inflight', '16'], { OUTPROBE_GATE_WRITE_QPS: '200' });
    assert.ok(set.ok);
    assert.deepEqual([set.config.gateWriteMaxInflight, set.config.gateWriteQps], [16, 200]);
    const bad = load(['--gate-write-max-inflight', '0'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /gateWriteMaxInflight/);
  });

  it('applies defaults', () => {
    const r = load([], { POD_NAME: 'outprobe-0' });
    assert.ok(r.ok);
    assert.equal(r.config.identity, 'outprobe-0');
    assert.equal(r.config.metricsPort, 8080);
    assert.equal(r.config.metricsHost, '0.0.0.0');
    assert.equal(r.config.concurrency, 256);
    assert.equal(r.config.execEnabled, false);
    assert.deepEqual(r.config.allowedCidrs, []);
    assert.equal(r.config.statusIntervalMs, 2000);
    assert.equal(r.config.maxProbeTimeoutSeconds, 60);
    assert.equal(r.config.stallBoundMs, 500);
    assert.equal(r.config.shutdownTimeoutMs, 20_000);
  });

  it('--shutdown-timeout [OUTPROBE_SHUTDOWN_TIMEOUT] bounds a stop, in seconds, 1 to 3600', () => {
    const fromFlag = load(['--shutdown-timeout', '7.5'], { OUTPROBE_SHUTDOWN_TIMEOUT: '9' });
    assert.ok(fromFlag.ok);
    assert.equal(fromFlag.config.shutdownTimeoutMs, 7500);
    const fromEnv = load([], { OUTPROBE_SHUTDOWN_TIMEOUT: '9' });
    assert.ok(fromEnv.ok);
    assert.equal(fromEnv.config.shutdownTimeoutMs, 9000);
    for (const bad of ['0', 'later', '3601']) {
      const r = load([`--shutdown-timeout=${bad}`], {});
      assert.ok(!r.ok, bad);
      assert.match(r.message, /shutdownTimeoutMs/);
    }
  });

  it('--stall-bound [OUTPROBE_STALL_BOUND] sets the stall guard\'s bound in seconds; 0 turns it off', () => {
    const fromFlag = load(['--stall-bound', '1.25'], { OUTPROBE_STALL_BOUND: '2' });
    assert.ok(fromFlag.ok);
    assert.equal(fromFlag.config.stallBoundMs, 1250);
    const fromEnv = load([], { OUTPROBE_STALL_BOUND: '0' });
    assert.ok(fromEnv.ok);
    assert.equal(fromEnv.config.stallBoundMs, 0);
    for (const bad of ['-1', 'soon', '61']) {
      const r = load([`--stall-bound=${bad}`], {});
      assert.ok(!r.ok, bad);
      assert.match(r.message, /stallBoundMs/);
    }
  });

  it('--max-probe-timeout [OUTPROBE_MAX_PROBE_TIMEOUT] sets the longest probe timeout, at least 1 s', () => {
    const fromFlag = load(['--max-probe-timeout', '10'], { OUTPROBE_MAX_PROBE_TIMEOUT: '20' });
    assert.ok(fromFlag.ok);
    assert.equal(fromFlag.config.maxProbeTimeoutSeconds, 10);
    const fromEnv = load([], { OUTPROBE_MAX_PROBE_TIMEOUT: '20' });
    assert.ok(fromEnv.ok);
    assert.equal(fromEnv.config.maxProbeTimeoutSeconds, 20);
    const bad = load(['--max-probe-timeout', '0'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /maxProbeTimeoutSeconds/);
  });

  it('flags win over environment variables', () => {
    const r = load(['--concurrency', '64', '--enable-exec-probes', '--metrics-addr', '127.0.0.1:0'], { OUTPROBE_CONCURRENCY: '8', OUTPROBE_ALLOWED_PROBE_CIDRS: '127.0.0.0/8, ::1/128' });
    assert.ok(r.ok);
    assert.equal(r.config.concurrency, 64);
    assert.equal(r.config.execEnabled, true);
    assert.equal(r.config.metricsHost, '127.0.0.1');
    assert.equal(r.config.metricsPort, 0);
    assert.deepEqual(r.config.allowedCidrs, ['127.0.0.0/8', '::1/128']);
  });

  it('trust limits (issue #10): exec in no namespace, output withheld, 10 remediations a minute, halt ceiling 50, no Delete', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.deepEqual(d.config.execNamespaces, []);
    assert.equal(d.config.publishExecOutput, false);
    assert.equal(d.config.maxRemediationsPerMinute, 10);
    assert.equal(d.config.maxHaltAbovePercentFailing, 50);
    assert.equal(d.config.allowDeleteAction, false);
    const r = load(['--exec-namespaces', 'ops, db', '--publish-exec-output', '--max-remediations-per-minute', '0', '--max-halt-above-percent-failing', '100', '--allow-delete-action'], {});
    assert.ok(r.ok, r.ok ? '' : r.message);
    assert.deepEqual(r.config.execNamespaces, ['ops', 'db']);
    assert.equal(r.config.publishExecOutput, true);
    assert.equal(r.config.maxRemediationsPerMinute, 0);
    assert.equal(r.config.maxHaltAbovePercentFailing, 100);
    assert.equal(r.config.allowDeleteAction, true);
    const all = load([], { OUTPROBE_EXEC_NAMESPACES: '*', OUTPROBE_ALLOW_DELETE_ACTION: 'true' });
    assert.ok(all.ok);
    assert.equal(all.config.execNamespaces, '*');
    assert.equal(all.config.allowDeleteAction, true);
    const bad = load(['--exec-namespaces', 'ops,*', '--max-halt-above-percent-failing', '101'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /execNamespaces/);
    assert.match(bad.message, /maxHaltAbovePercentFailing/);
  });

  it('rejects bad values with a message naming the setting', () => {
    const r = load(['--concurrency', '0', '--log-level', 'loud'], {});
    assert.ok(!r.ok);
    assert.match(r.message, /concurrency/);
    assert.match(r.message, /logLevel/);
  });

  it('rejects unknown flags and offers --help', () => {
    const bad = load(['--frobnicate'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /frobnicate/);
    const help = load(['--help'], {});
    assert.ok(!help.ok && help.help);
    assert.match(help.message, /--enable-exec-probes/);
  });

  it('--metrics-auth: kubernetes by default on 0.0.0.0; none binds loopback unless an address is given', () => {
    const def = load([], {});
    assert.ok(def.ok);
    assert.equal(def.config.metricsAuth, 'kubernetes');
    assert.equal(def.config.metricsHost, '0.0.0.0');
    const none = load(['--metrics-auth=none'], {});
    assert.ok(none.ok);
    assert.equal(none.config.metricsAuth, 'none');
    assert.equal(none.config.metricsHost, '127.0.0.1');
    assert.equal(none.config.metricsPort, 8080);
    const open = load(['--metrics-addr', '0.0.0.0:9090'], { OUTPROBE_METRICS_AUTH: 'none' });
    assert.ok(open.ok);
    assert.equal(open.config.metricsAuth, 'none');
    assert.equal(open.config.metricsHost, '0.0.0.0');
    const bad = load(['--metrics-auth', 'basic'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /metricsAuth/);
    const help = load(['--help'], {});
    assert.ok(!help.ok && help.help);
    assert.match(help.message, /--metrics-auth/);
  });

  it('--metrics-cert-dir: TLS on the metrics port from a directory, by flag or OUTPROBE_METRICS_CERT_DIR; unset or blank is plain HTTP (ADR 0068)', () => {
    const def = load([], {});
    assert.ok(def.ok);
    assert.equal(def.config.metricsCertDir, undefined);
    const flag = load(['--metrics-cert-dir', ' /etc/outprobe/metrics-tls '], { OUTPROBE_METRICS_CERT_DIR: '/env' });
    assert.ok(flag.ok);
    assert.equal(flag.config.metricsCertDir, '/etc/outprobe/metrics-tls', 'the flag wins over the environment');
    const env = load([], { OUTPROBE_METRICS_CERT_DIR: '/env' });
    assert.ok(env.ok);
    assert.equal(env.config.metricsCertDir, '/env');
    const blank = load(['--metrics-cert-dir='], {});
    assert.ok(blank.ok);
    assert.equal(blank.config.metricsCertDir, undefined);
    const withNone = load(['--metrics-cert-dir', '/c', '--metrics-auth', 'none'], {});
    assert.ok(withNone.ok, 'TLS without authentication is allowed (a scraper that verifies the server, with no token)');
    assert.equal(withNone.config.metricsCertDir, '/c');
    assert.equal(def.config.metricsTlsMinVersion, 'TLSv1.2');
    const v13 = load(['--metrics-cert-dir', '/c'], { OUTPROBE_METRICS_TLS_MIN_VERSION: 'VersionTLS13' });
    assert.ok(v13.ok);
    assert.equal(v13.config.metricsTlsMinVersion, 'TLSv1.3');
    const old = load(['--metrics-tls-min-version', 'VersionTLS11'], {});
    assert.ok(!old.ok);
    assert.match(old.message, /metricsTlsMinVersion/);
  });

  it('--namespace takes a comma-separated list; unset means all namespaces', () => {
    const list = load(['--namespace', 'shop, web,shop'], {});
    assert.ok(list.ok);
    assert.deepEqual(list.config.namespaces, ['shop', 'web']);
    const env = load([], { OUTPROBE_NAMESPACE: 'one' });
    assert.ok(env.ok);
    assert.deepEqual(env.config.namespaces, ['one']);
    const all = load([], {});
    assert.ok(all.ok);
    assert.deepEqual(all.config.namespaces, []);
    const bad = load(['--namespace', 'shop,Not_A_Namespace'], {});
    assert.ok(!bad.ok);
    assert.match(bad.message, /namespaces\.1: must be a namespace name/);
  });

  it('the injection webhook is off unless --webhook-addr names a listener (the chart sets 0.0.0.0:9443)', () => {
    const d = load([], {});
    assert.ok(d.ok);
    assert.equal(d.config.webhook, undefined);
    const on = load(['--webhook-addr', '0.0.0.0:9443'], {});
    assert.ok(on.ok);
    assert.deepEqual(on.config.webhook, { host: '0.0.0.0', port: 9443 });
    assert.equal(d.config.webhookSecret, 'outprobe-webhook-tls');
    assert.equal(d.config.webhookService, 'outprobe-webhook');
    assert.equal(d.config.webhookConfiguration, undefined);
    assert.equal(d.config.webhookCertDir, undefined);
    for (const off of ['', 'off']) {
      const r = load(['--webhook-addr', off], {});
      assert.ok(r.ok);
      assert.equal(r.config.webhook, undefined);
    }
    const set = load(['--webhook-addr', '[::1]:0', '--webhook-configuration', 'outprobe', '--webhook-cert-dir', '/certs'], { OUTPROBE_WEBHOOK_SECRET: 'tls' });
    assert.ok(set.ok);
    assert.deepEqual(set.config.webhook, { host: '::1', port: 0 });
    assert.equal(set.config.webhookConfiguration, 'outprobe');
    assert.equal(set.config.webhookCertDir, '/certs');
    assert.equal(set.config.webhookSecret, 'tls');
    assert.ok(!load(['--webhook-secret', 'Bad Name'], {}).ok);
  });
});
