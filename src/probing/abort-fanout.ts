/**
 * Probes waiting on an AbortSignal, on one listener per signal (issue 31
 * item 6). `addEventListener` and `removeEventListener` per probe cost a
 * Listener object each, and Node drops a signal's listener map entry when
 * its last listener goes, so a signal that one probe after another waits on
 * (the Scheduler hands a target's passes one signal until the target goes)
 * rebuilt that entry twice per probe. Here each signal gets one `abort`
 * listener the first time a probe links itself to it, and probes link and
 * unlink themselves in O(1) without allocating: the probe object itself is
 * the list node (as in deadline.ts). The listener lives as long as the
 * signal (a WeakMap holds the list), so a signal keeps one listener however
 * many probes waited on it; a signal of an `ownedController` needs none.
 */

/** A probe that wants to hear its signal abort: the list links live on the probe. */
export interface AbortLink {
  /** Called once when the signal aborts, unless unlinked first. */
  onAbort(): void;
  abortNext: AbortLink | undefined;
  abortPrev: AbortLink | undefined;
  abortList: AbortList | undefined;
}

/** The probes linked to one signal, in the order they linked. */
export class AbortList {
  head: AbortLink | undefined = undefined;
  tail: AbortLink | undefined = undefined;

  /** The signal's one listener: every linked probe hears it, in order. */
  handleEvent(): void {
    let link = this.head;
    this.head = undefined;
    this.tail = undefined;
    while (link !== undefined) {
      const next = link.abortNext;
      link.abortList = undefined;
      link.abortPrev = undefined;
      link.abortNext = undefined;
      link.onAbort();
      link = next;
    }
  }
}

const lists = new WeakMap<AbortSignal, AbortList>();

/**
 * A controller whose owner aborts it only through `abortLinked` (the
 * Scheduler's per-target controllers): probes linked to its signal are told
 * by that call, so its signal needs no `abort` listener at all, and keeps
 * none of the listener state Node builds for one (about 300 bytes a signal).
 * Listeners others add with `addEventListener` still hear it as usual.
 */
export function ownedController(): AbortController {
  const controller = new AbortController();
  lists.set(controller.signal, new AbortList());
  return controller;
}

/** Aborts a controller and tells every probe linked to its signal (after the abort: they see `signal.aborted`). */
export function abortLinked(controller: AbortController, reason: Error): void {
  if (controller.signal.aborted) return;
  controller.abort(reason);
  lists.get(controller.signal)?.handleEvent();
}

/**
 * `link.onAbort()` runs when `signal` aborts, unless `unlinkAbort(link)`
 * comes first. The caller checks `signal.aborted` before (an aborted signal
 * never fires again). A link already linked is moved.
 */
export function linkAbort(signal: AbortSignal, link: AbortLink): void {
  if (link.abortList !== undefined) unlinkAbort(link);
  let list = lists.get(signal);
  if (list === undefined) {
    list = new AbortList();
    lists.set(signal, list);
    signal.addEventListener('abort', list, { once: true });
  }
  link.abortList = list;
  link.abortPrev = list.tail;
  link.abortNext = undefined;
  if (list.tail === undefined) list.head = link;
  else list.tail.abortNext = link;
  list.tail = link;
}

/** Forgets a link; harmless if it fired or was never linked. */
export function unlinkAbort(link: AbortLink): void {
  const list = link.abortList;
  if (list === undefined) return;
  const { abortPrev: prev, abortNext: next } = link;
  if (prev === undefined) list.head = next;
  else prev.abortNext = next;
  if (next === undefined) list.tail = prev;
  else next.abortPrev = prev;
  link.abortList = undefined;
  link.abortPrev = undefined;
  link.abortNext = undefined;
}
