/**
 * The divergence view (pure): does the node's readiness (ContainersReady)
 * disagree with outprobe's, stably? See ADR 0023.
 */
export { decideDivergence, divergenceMessage } from './decide.ts';
export type { Divergence, DivergenceInput, NodeView, OutsideView } from './decide.ts';
