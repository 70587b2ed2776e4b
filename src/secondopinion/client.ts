import type { AskPeer } from './guard.ts';
import { parseAnswer, requestBody, secondOpinionPath } from './protocol.ts';

/**
 * Asks a peer over HTTP with this replica's bearer token, read on every ask
 * (a rotated ServiceAccount token is picked up). Redirects are not followed.
 * Any status but 200 (and 404: not served) is an error; the token is never
 * part of an error message.
 */
export function httpAskPeer(token: () => string | undefined | Promise<string | undefined>): AskPeer {
  return async (address, request, signal) => {
    const bearer = await token();
    if (bearer === undefined || bearer === '') throw new Error('no bearer token to present to the peer');
    const res = await fetch(`http://${address}${secondOpinionPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: requestBody(request),
      redirect: 'manual',
      signal,
    });
    if (res.status === 404) {
      await res.body?.cancel();
      return 'not-served';
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`peer answered HTTP ${res.status}`);
    }
    const text = await res.text();
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new Error('peer answered malformed JSON');
    }
    const answer = parseAnswer(raw);
    if (answer === undefined) throw new Error('peer answered no result');
    return answer;
  };
}
