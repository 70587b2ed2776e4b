// `helm test` (templates/tests/fleet-test.yaml): run by the chart's own image with its
// test ServiceAccount. Passes when, within TIMEOUT_SECONDS, every replica is Running and
// Ready, holds a live shard Lease, answers /readyz, and its /metrics shows every replica as
// a member and no pod unowned. Prints what it saw; exits 1 with the reason otherwise.
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
const token = fs.readFileSync(`${sa}/token`, 'utf8').trim();
const ca = fs.readFileSync(`${sa}/ca.crt`);
const ns = process.env.RELEASE_NAMESPACE;
const want = Number(process.env.REPLICAS);
const deadline = Date.now() + Number(process.env.TIMEOUT_SECONDS) * 1000;
// metrics.tls (ADR 0068): the metrics port serves https, verified against the CA scrapers trust.
const metricsTls = process.env.METRICS_CA_FILE ? { ca: fs.readFileSync(process.env.METRICS_CA_FILE), servername: process.env.METRICS_SERVER_NAME } : undefined;
const metricsCall = (options) => (metricsTls === undefined ? call(http, options) : call(https, { ...options, ...metricsTls }));

function call(mod, options) {
  return new Promise((resolve, reject) => {
    const req = mod.get({ timeout: 5000, ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`${options.host}${options.path}: no answer in 5 s`)));
    req.on('error', reject);
  });
}

async function api(path) {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const r = await call(https, { host: host.includes(':') ? `[${host}]` : host, port: process.env.KUBERNETES_SERVICE_PORT, path, ca, headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body);
}

function gauge(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function check() {
  const pods = (await api(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(process.env.REPLICA_SELECTOR)}`)).items;
  const ready = pods.filter((p) => p.status.phase === 'Running' && (p.status.conditions || []).some((c) => c.type === 'Ready' && c.status === 'True'));
  if (ready.length !== want) return `${ready.length} of ${want} replicas Running and Ready (pods: ${pods.map((p) => `${p.metadata.name} ${p.status.phase}`).join(', ')})`;
  const leases = (await api(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=${encodeURIComponent('outprobe.io/shard=true')}`)).items;
  const now = Date.now();
  const live = new Set(leases.filter((l) => l.spec.holderIdentity && Date.parse(l.spec.renewTime) + (l.spec.leaseDurationSeconds || 0) * 1000 > now).map((l) => l.spec.holderIdentity));
  for (const p of ready) {
    if (!live.has(p.metadata.name)) return `replica ${p.metadata.name} holds no live shard Lease (live: ${[...live].join(', ') || 'none'})`;
    const host = p.status.podIP.includes(':') ? `[${p.status.podIP}]` : p.status.podIP;
    const readyz = await metricsCall({ host, port: process.env.METRICS_PORT, path: '/readyz' });
    if (readyz.status !== 200) return `replica ${p.metadata.name} /readyz: HTTP ${readyz.status} ${readyz.body.trim()}`;
    const metrics = await metricsCall({ host, port: process.env.METRICS_PORT, path: '/metrics', headers: { authorization: `Bearer ${token}` } });
    if (metrics.status !== 200) return `replica ${p.metadata.name} /metrics: HTTP ${metrics.status}`;
    const members = gauge(metrics.body, 'outprobe_shard_members');
    const unowned = gauge(metrics.body, 'outprobe_unowned_pods');
    if (members !== want) return `replica ${p.metadata.name} sees ${members} members, not ${want}`;
    if (unowned !== 0) return `replica ${p.metadata.name} counts ${unowned} pods no replica owns`;
    console.log(`ok: ${p.metadata.name} Ready, Lease live, /readyz 200, members ${members}, unowned pods ${unowned}`);
  }
  return undefined;
}

(async () => {
  for (;;) {
    let why;
    try {
      why = await check();
    } catch (err) {
      why = String(err && err.message ? err.message : err);
    }
    if (why === undefined) return console.log(`outprobe: ${want} replicas Ready, members of the fleet, every pod owned`);
    if (Date.now() > deadline) {
      console.error(`outprobe helm test failed: ${why}`);
      process.exit(1);
    }
    console.log(`waiting: ${why}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
})();
