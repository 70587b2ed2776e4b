// A client-go exec credential plugin for tests (what `aws eks get-token` or
// `gke-gcloud-auth-plugin` are in real life): prints an ExecCredential whose
// token is the current content of <state>/token, valid for <lifetime> seconds,
// and appends one line per call to <state>/calls.
//   usage: node exec-credential-plugin.ts <state dir> <lifetime seconds>
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [state = '.', lifetime = '3'] = process.argv.slice(2);
const token = readFileSync(join(state, 'token'), 'utf8').trim();
appendFileSync(join(state, 'calls'), `${new Date().toISOString()}\n`);
const expirationTimestamp = new Date(Date.now() + Number(lifetime) * 1000).toISOString();
process.stdout.write(`${JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token, expirationTimestamp } })}\n`);
