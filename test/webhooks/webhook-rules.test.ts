// The webhook rules that need no server: the retry schedule, the address rules, the signature.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/wire/contract.constants.js';
import { CreateWebhookEndpointBody } from '../../src/wire/webhooks.schemas.js';
import { isRefusedAddress } from '../../src/webhooks/address-policy.js';
import { DEFAULT_RETRY_DELAYS_MS, retryDelayMs } from '../../src/webhooks/delivery-worker.js';
import { signatureHeader } from '../../src/webhooks/webhook-signature.js';

describe('the retry schedule', () => {
  const lowest = () => 0;
  const highest = () => 0.999_999;

  it('retries first within 10 s, then for at least 24 h over about 8 attempts, each wait longer than the last', () => {
    expect(retryDelayMs(DEFAULT_RETRY_DELAYS_MS, 0, highest)).toBeLessThanOrEqual(10_000);
    const waits = DEFAULT_RETRY_DELAYS_MS.map((_, retry) => retryDelayMs(DEFAULT_RETRY_DELAYS_MS, retry, lowest));
    expect(waits.reduce((sum, wait) => sum + wait, 0)).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(waits.length + 1).toBe(8);
    for (let i = 1; i < waits.length; i += 1) expect(waits[i]).toBeGreaterThan(waits[i - 1]!);
  });

  it('adds up to a quarter of jitter, never less than the wait', () => {
    expect(retryDelayMs([1000], 0, lowest)).toBe(1000);
    expect(retryDelayMs([1000], 0, highest)).toBe(1250);
    // Past the schedule's end, the last wait repeats.
    expect(retryDelayMs([1000, 4000], 5, lowest)).toBe(4000);
  });
});

describe('addresses outside global unicast', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.0.0.1', true],
    ['172.16.5.4', true],
    ['172.32.0.1', false],
    ['192.168.0.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['::', true],
    ['::1', true],
    ['fe80::1', true],
    ['fd12:3456::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:93.184.216.34', false],
    ['93.184.216.34', false],
    ['8.8.8.8', false],
    ['2606:2800:220:1:248:1893:25c8:1946', false],
    // Reserved IPv4 ranges, and every IPv6 form that embeds an IPv4 address, judged as that address.
    ['198.18.0.1', true],
    ['198.19.255.255', true],
    ['192.0.0.1', true],
    ['192.0.2.1', true],
    ['198.51.100.7', true],
    ['203.0.113.9', true],
    ['240.0.0.1', true],
    ['100.127.255.254', true],
    ['239.255.255.250', true],
    ['::127.0.0.1', true],
    ['::7f00:1', true],
    ['::5db8:d822', false],
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::93.184.216.34', false],
    ['64:ff9b:1::5db8:d822', true],
    ['2002:7f00:1::', true],
    ['2002:a00:1::1', true],
    ['2002:5db8:d822::1', false],
    ['::ffff:0:7f00:1', true],
    ['::ffff:0:5db8:d822', false],
    ['::ffff:7f00:1', true],
    ['2001:db8::1', true],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true],
    ['ff02::1', true],
    ['fec0::1', true],
    ['100::1', true],
    ['2a00:1450:4001:80b::200e', false],
    ['not-an-address', true],
  ])('%s is refused: %s', (address, expected) => {
    expect(isRefusedAddress(address)).toBe(expected);
  });
});

describe('signatures (Standard Webhooks)', () => {
  const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
  const other = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
  const body = '{"id":"evt_1","type":"user_group.created"}';

  it('signs as the reference library does', () => {
    const at = new Date(1_800_000_000_000);
    expect(signatureHeader([secret], 'evt_1', at.getTime() / 1000, body)).toBe(
      new Webhook(secret).sign('evt_1', at, body),
    );
  });

  it('writes one signature per secret, space-separated, and the reference library accepts either secret', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([secret, other], 'evt_1', timestamp, body);
    expect(header.split(' ')).toEqual([
      new Webhook(secret).sign('evt_1', new Date(timestamp * 1000), body),
      new Webhook(other).sign('evt_1', new Date(timestamp * 1000), body),
    ]);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(other).verify(body, headers)).toEqual(JSON.parse(body));
  });
});

it('the API schema lists exactly the event types the service announces', () => {
  const literals = (CreateWebhookEndpointBody.properties.events.items.anyOf as Array<{ const: string }>).map(
    (schema) => schema.const,
  );
  expect(literals).toEqual([...WEBHOOK_EVENT_TYPES, '*']);
});
