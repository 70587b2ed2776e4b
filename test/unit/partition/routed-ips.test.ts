import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routedIps } from '../../support/partition/index.ts';

// Shapes as kube-proxy v1.37's nftables proxier writes them (servicePortChainNameBase /
// servicePortEndpointChainNameBase), with and without the quotes nft may print.
const table = `table ip kube-proxy {
\tchain service-ULMVA6XW-shop/web/tcp/http {
\t\tip daddr 198.19.31.149 tcp dport 80 ip saddr != 198.19.16.0/20 jump mark-for-masquerade
\t\tnumgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-shop/web/tcp/http__198.19.18.1/8080, 1 : goto "endpoint-ZZ2A7QBN-shop/web/tcp/http__198.19.20.1/8080" }
\t}
\tchain service-AAAA1111-shop/webx/tcp/http {
\t\tnumgen random mod 1 vmap { 0 : goto endpoint-BBBB2222-shop/webx/tcp/http__198.19.19.1/8080 }
\t}
\tchain service-KHN6ECMT-shop/direct/tcp/http {
\t\tmeta l4proto tcp dnat ip to numgen random mod 3 map { 0 : 198.19.210.1 . 8080, 1 : 198.19.211.1 . 8080, 2 : 198.19.212.1 . 8080 }
\t}
\tchain endpoint-CCCC3333-shop/web/tcp/http__198.19.19.1/8080 {
\t\tip saddr 198.19.19.1 jump mark-for-masquerade
\t}
}`;

test('routedIps: the endpoints the Service chain dispatches to, not stale endpoint chains nor other Services', () => {
  assert.deepEqual([...routedIps(table, 'shop', 'web')].sort(), ['198.19.18.1', '198.19.20.1']);
  assert.deepEqual([...routedIps(table, 'shop', 'webx')], ['198.19.19.1']);
  assert.deepEqual([...routedIps(table, 'other', 'web')], []);
  assert.deepEqual([...routedIps(table, 'shop', 'direct')].sort(), ['198.19.210.1', '198.19.211.1', '198.19.212.1']);
});
