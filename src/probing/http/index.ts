export { createHttpProber, maxBodyBytes, maxRedirects } from './prober.ts';
export type { HttpProber, HttpProberOptions } from './prober.ts';
export { ProbeDispatcher } from './probe-dispatcher.ts';
