import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { KubeConfig, User } from '@kubernetes/client-node';
import { parse } from 'yaml';

interface RawUsers {
  readonly users?: readonly { readonly name?: unknown; readonly user?: { readonly tokenFile?: unknown } | null }[] | null;
}

/**
 * The one gap client-node 2.0.1 leaves in a kubeconfig: a user's `tokenFile`
 * (kubectl's key; client-node looks for `token-file` and reads it once, at
 * load). Such a user becomes client-node's own token-file authenticator,
 * which re-reads the file every minute as client-go does, so a rotated token
 * is picked up. Only `users[].user.tokenFile` is read here; everything else
 * is client-node's. The path is relative to the kubeconfig's directory.
 */
export function withTokenFiles(kc: KubeConfig, file: string): void {
  const raw = parse(readFileSync(file, 'utf8')) as RawUsers | null;
  const files = new Map<string, string>();
  for (const u of raw?.users ?? []) {
    const tokenFile = u.user?.tokenFile;
    if (typeof u.name === 'string' && typeof tokenFile === 'string' && tokenFile !== '') {
      files.set(u.name, isAbsolute(tokenFile) ? tokenFile : join(dirname(file), tokenFile));
    }
  }
  if (files.size === 0) return;
  kc.users = kc.getUsers().map((user): User => {
    const tokenFile = files.get(user.name);
    if (tokenFile === undefined || user.exec != null || user.authProvider != null) return user;
    // tokenFile wins over token, as in client-go.
    const rest = Object.fromEntries(Object.entries(user).filter(([k]) => k !== 'token')) as unknown as User;
    return { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile } } };
  });
}
