/**
 * undici's WebSocket has no way to drop its connection: close() sends a
 * Close frame and then waits for the peer's, forever if the peer never
 * answers. This dispatcher hands the upgraded socket to the caller, who can
 * then destroy it once the close handshake has had its chance.
 */
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';

/** `dispatcher`, reporting the socket of every upgrade it completes to `onSocket`. */
export function capturingUpgrades(dispatcher: Dispatcher, onSocket: (socket: Duplex) => void): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => dispatch(opts, new Proxy(handler, {
    get(target, prop, receiver): unknown {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop !== 'onRequestUpgrade' || typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const socket = args[3];
        if (socket !== null && typeof socket === 'object' && 'destroy' in socket) onSocket(socket as Duplex);
        return Reflect.apply(value, target, args);
      };
    },
  })));
}
