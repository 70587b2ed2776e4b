export { createGrpcProber } from './prober.ts';
export type { GrpcProber, GrpcProberOptions } from './prober.ts';
export { formatGoDuration } from './duration.ts';
