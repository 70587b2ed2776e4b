/**
 * Node's TCP handle for the probe executors (ADR 0025): loaded once, and
 * undefined when this Node does not offer it in the shape the executors
 * rely on (they then use node:net).
 */
import { loadRawTcp } from './binding.ts';
import type { RawTcp } from './binding.ts';

export { errnoError, hostPortError, loadRawTcp } from './binding.ts';
export type { ConnectReq, RawTcp, TcpHandle, WriteReq } from './binding.ts';

let loaded: { readonly raw: RawTcp | undefined; readonly why: string } | undefined;

/** The raw TCP layer, or undefined when the executors must use node:net. */
export function rawTcp(): RawTcp | undefined {
  loaded ??= loadRawTcp();
  return loaded.raw;
}

/** Why the raw layer is not used ('' when it is). */
export function rawTcpUnavailableBecause(): string {
  loaded ??= loadRawTcp();
  return loaded.why;
}
