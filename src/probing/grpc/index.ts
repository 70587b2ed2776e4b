export { createGrpcProber } from './prober.ts';
export type { GrpcProber } from './prober.ts';
export { formatGoDuration } from './duration.ts';
