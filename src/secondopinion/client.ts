import { AskError } from './guard.ts';
import type { AskPeer } from './guard.ts';
import { parseAnswer, requestBody, secondOpinionPath } from './protocol.ts';

/**
 * Asks a peer over HTTP with this replica's *peer* token (ADR 0037: a
 * projected ServiceAccount token of the peer audience, read from its file;
 * never the API token), read on every ask so a rotated one is picked up.
 * Redirects are not followed. Any status but 200 (and 404: not served) is an
 * AskError with its reason; the token is never part of an error message.
 */
export function httpAskPeer(token: () => string | undefined | Promise<string | undefined>): AskPeer {
  return async (address, request, signal) => {
    const bearer = await token();
    if (bearer === undefined || bearer === '') throw new AskError('no_token', 'no peer token to present to the peer');
    let res: Response;
    try {
      res = await fetch(`http://${address}${secondOpinionPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: requestBody(request),
        redirect: 'manual',
        signal,
      });
    } catch (err: unknown) {
      throw new AskError('unreachable', `peer not reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return 'not-served';
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      const reason = res.status === 429 ? 'overloaded' : res.status === 401 || res.status === 403 ? 'refused' : res.status >= 500 ? 'peer_error' : 'protocol';
      throw new AskError(reason, `peer answered HTTP ${res.status}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(await res.text());
    } catch {
      throw new AskError('protocol', 'peer answered malformed JSON');
    }
    const answer = parseAnswer(raw);
    if (answer === undefined) throw new AskError('protocol', 'peer answered no result');
    return answer;
  };
}
