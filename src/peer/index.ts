/**
 * The peer channel (ADR 0037): a listener of its own for what replicas ask
 * each other, authenticated with projected ServiceAccount tokens of a
 * dedicated audience bound to pods that are proven members (ADR 0036),
 * admitted so that no flood of strangers can starve a known peer. The
 * replica's API token never leaves for a peer.
 */
export { PeerAuth, plainAddress } from './auth.ts';
export type { PeerAuthOptions, PeerReview } from './auth.ts';
export { nodeNameKey, peerAudience, peerIdentity, podNameKey, podUidKey, serviceAccountUser } from './identity.ts';
export type { PeerIdentity } from './identity.ts';
export { startPeerServer } from './server.ts';
export type { PeerHandler, PeerServer } from './server.ts';
export { PeerTokenFile } from './token-file.ts';
