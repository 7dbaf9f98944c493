import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { failure } from '../domain/errors.js';
import type { WebhookAddressPolicy } from '../domain/webhook-endpoints/webhook-endpoints.service.js';

/** Where a host name resolves: every address, as `dns.lookup` gives them (the hosts file included). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

const blockList = (type: 'ipv4' | 'ipv6', networks: ReadonlyArray<readonly [string, number]>) => {
  const list = new BlockList();
  for (const [network, prefix] of networks) list.addSubnet(network, prefix, type);
  return list;
};

/*
 * A webhook reaches global unicast addresses only, unless private ones are allowed. These
 * IPv4 networks are not global unicast (IANA's special-purpose registry): "this network", private,
 * carrier-grade NAT, loopback, link-local, IETF protocol assignments, documentation, the 6to4 relay
 * anycast, benchmarking, multicast and reserved (with broadcast).
 */
const NOT_GLOBAL_V4 = blockList('ipv4', [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]);

/** IPv6 global unicast is 2000::/3; everything outside it (loopback, link-local, unique-local, multicast…) is refused. */
const GLOBAL_UNICAST_V6 = blockList('ipv6', [['2000::', 3]]);

/**
 * Inside 2000::/3, still not global: IETF protocol assignments (Teredo, which hides an IPv4
 * address, among them) and the documentation prefixes.
 */
const NOT_GLOBAL_V6 = blockList('ipv6', [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
]);

/**
 * The IPv6 forms that carry an IPv4 address, and where: IPv4-compatible (::/96), IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96) and NAT64 (64:ff9b::/96) in the last 32 bits,
 * 6to4 (2002::/16) in bits 16 to 47. Such an address is judged as the IPv4 address it reaches.
 * (NAT64's local-use prefix 64:ff9b:1::/48 lies outside 2000::/3 and is refused whole.)
 */
const IPV4_EMBEDDING: ReadonlyArray<{ prefix: BlockList; offset: number }> = [
  { prefix: blockList('ipv6', [['::', 96]]), offset: 12 },
  { prefix: blockList('ipv6', [['::ffff:0:0', 96]]), offset: 12 },
  { prefix: blockList('ipv6', [['::ffff:0:0:0', 96]]), offset: 12 },
  { prefix: blockList('ipv6', [['64:ff9b::', 96]]), offset: 12 },
  { prefix: blockList('ipv6', [['2002::', 16]]), offset: 2 },
];

/** The 16 bytes of an IPv6 address (one isIP accepts: with `::` and an optional dotted IPv4 tail). */
function ipv6Bytes(address: string): Uint8Array {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string) => {
    if (part === '') return [];
    const pieces = part.split(':');
    const last = pieces[pieces.length - 1]!;
    if (!last.includes('.')) return pieces.map((piece) => parseInt(piece, 16));
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    return [...pieces.slice(0, -1).map((piece) => parseInt(piece, 16)), (a << 8) | b, (c << 8) | d];
  };
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const words = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return new Uint8Array(words.flatMap((word) => [word >> 8, word & 0xff]));
}

/** Whether a webhook may not reach this IP address (anything but a valid IPv4 or IPv6 address included). */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NOT_GLOBAL_V4.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedding = IPV4_EMBEDDING.find(({ prefix }) => prefix.check(address, 'ipv6'));
  if (embedding) {
    const bytes = ipv6Bytes(address).slice(embedding.offset, embedding.offset + 4);
    return NOT_GLOBAL_V4.check(bytes.join('.'), 'ipv4');
  }
  return !GLOBAL_UNICAST_V6.check(address, 'ipv6') || NOT_GLOBAL_V6.check(address, 'ipv6');
}

/** `[::1]` as URL.hostname writes an IPv6 literal, without its brackets. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** `localhost` and its subdomains resolve to loopback by definition (RFC 6761): refused without a lookup. */
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * What a tenant is told when a destination is refused, at creation and in a delivery's last_error:
 * the same words whether a name did not resolve or resolved to a refused address, so that nobody
 * maps the operator's internal names through it. The detail goes to the operator's log only.
 */
export const REFUSED_DESTINATION =
  'the destination is not allowed or cannot be resolved: webhooks reach only public (global unicast) addresses';

/** A delivery's destination that may not be (or could not be) used; `detail` is for the operator's log only. */
export class RefusedDestinationError extends Error {
  constructor(readonly detail: string) {
    super(REFUSED_DESTINATION);
    this.name = 'RefusedDestinationError';
  }
}

/**
 * The addresses a delivery may connect to: all of them when private ones are allowed, else all of
 * them only if none is refused (a name that answers with one refused address is refused whole).
 */
export async function deliverableAddresses(
  hostname: string,
  options: { allowPrivate: boolean; resolve: Resolver },
): Promise<string[]> {
  const host = bareHost(hostname);
  if (!options.allowPrivate && isLocalhostName(host)) throw new RefusedDestinationError(`${host} is localhost`);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await options.resolve(host);
  } catch (error) {
    throw new RefusedDestinationError(`${host} does not resolve (${(error as Error).message})`);
  }
  if (addresses.length === 0) throw new RefusedDestinationError(`${host} resolves to no address`);
  if (!options.allowPrivate) {
    const refused = addresses.find(isRefusedAddress);
    if (refused !== undefined)
      throw new RefusedDestinationError(`${host} resolves to ${refused}, which is not a global unicast address`);
  }
  return addresses;
}

/**
 * The check made when an endpoint is created or its URL changed: a literal address outside global
 * unicast, or localhost, is refused; a name is not resolved now (it may not exist yet) but at each
 * delivery, where the same rule applies.
 */
export function createAddressPolicy(options: { allowPrivate: boolean }): WebhookAddressPolicy {
  return {
    async assertDeliverable(url) {
      const host = bareHost(new URL(url).hostname);
      if (options.allowPrivate || (!isIP(host) && !isLocalhostName(host))) return;
      if (isLocalhostName(host) || isRefusedAddress(host))
        throw failure.webhookUrl(`is refused: ${REFUSED_DESTINATION}`);
    },
  };
}
