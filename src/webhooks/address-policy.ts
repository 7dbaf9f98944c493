import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { failure } from '../domain/errors.js';
import type { WebhookAddressPolicy } from '../domain/webhook-endpoints.service.js';

/** Where a host name resolves: every address, as `dns.lookup` gives them (the hosts file included). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/*
 * The addresses a webhook must never reach unless private addresses are allowed (SPEC §13): loopback,
 * private, link-local and unspecified, plus their relatives a request could be aimed at the same way
 * (carrier-grade NAT, multicast, broadcast, IPv6 unique-local and site-local).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** Whether an IP address is one a webhook must not reach; an IPv4-mapped IPv6 address counts as its IPv4 address. */
export function isPrivateAddress(address: string): boolean {
  const mapped = MAPPED_IPV4.exec(address)?.[1];
  if (mapped !== undefined) return PRIVATE.check(mapped, 'ipv4');
  return PRIVATE.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** `[::1]` as URL.hostname writes an IPv6 literal, without its brackets. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The addresses a delivery may connect to: all of them when private ones are allowed, else all of
 * them only if none is private (a name that answers with one private address is refused whole).
 */
export async function deliverableAddresses(
  hostname: string,
  options: { allowPrivate: boolean; resolve: Resolver },
): Promise<string[]> {
  const host = bareHost(hostname);
  const addresses = isIP(host) ? [host] : await options.resolve(host);
  if (addresses.length === 0) throw new Error(`${host} resolves to no address`);
  if (!options.allowPrivate) {
    const refused = addresses.find(isPrivateAddress);
    if (refused !== undefined) throw new PrivateAddressError(host, refused);
  }
  return addresses;
}

export class PrivateAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a loopback, private, link-local or unspecified address`);
    this.name = 'PrivateAddressError';
  }
}

/** The check made when an endpoint is created or its URL changed; deliveries check again, at each connection. */
export function createAddressPolicy(options: { allowPrivate: boolean; resolve?: Resolver }): WebhookAddressPolicy {
  const resolve = options.resolve ?? systemResolver;
  return {
    async assertDeliverable(url) {
      const { hostname } = new URL(url);
      try {
        await deliverableAddresses(hostname, { allowPrivate: options.allowPrivate, resolve });
      } catch (error) {
        const reason =
          error instanceof PrivateAddressError
            ? `${error.message}; webhooks may not call it`
            : `its host does not resolve (${(error as Error).message})`;
        throw failure.webhookUrl(`is refused: ${reason}`);
      }
    },
  };
}
