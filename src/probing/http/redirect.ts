import { joinHostPort } from '../request.ts';
import type { ProbeUrl } from './url.ts';

/** Go's client follows these codes when a Location is present. */
const followed = new Set([301, 302, 303, 307, 308]);

export function isFollowedRedirect(statusCode: number, location: string | undefined): location is string {
  return followed.has(statusCode) && location !== undefined && location !== '';
}

const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/;
const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Resolves a Location against the current hop the way Go's client does.
 * Returns the next hop and whether the Location was absolute (a relative
 * Location keeps a user Host override; an absolute one drops it). Returns an
 * error text for what Go refuses (an unparsable Location or a scheme other
 * than http/https).
 */
export function nextHop(
  current: ProbeUrl,
  location: string,
): { readonly url: ProbeUrl; readonly relative: boolean } | { readonly error: string } {
  let resolved: URL;
  try {
    resolved = new URL(location, `${current.scheme}://${current.authority}${current.requestTarget}`);
  } catch {
    return { error: `failed to parse Location header ${JSON.stringify(location)}` };
  }
  const scheme = resolved.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') return { error: `unsupported protocol scheme ${JSON.stringify(scheme)}` };
  const hostname = resolved.hostname.startsWith('[') ? resolved.hostname.slice(1, -1) : resolved.hostname;
  const port = resolved.port === '' ? (scheme === 'https' ? 443 : 80) : Number(resolved.port);
  const match = absolute.exec(location) ?? /^\/\/([^/?#]*)/.exec(location);
  // Go keeps the authority as written in the Location (no default-port normalisation).
  const written = match?.[1]?.replace(/^.*@/, '');
  return {
    // url.IsAbs(): only a Location with a scheme drops a user Host override.
    relative: !hasScheme.test(location),
    url: {
      scheme,
      hostname,
      port,
      authority: match === null ? current.authority : (written ?? joinHostPort(hostname, port)),
      requestTarget: `${resolved.pathname}${resolved.search}` || '/',
    },
  };
}
