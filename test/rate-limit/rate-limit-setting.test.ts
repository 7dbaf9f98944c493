import { describe, expect, it } from 'vitest';
import { parseBurst, parseRate, parseRateSetting, rateLimitPolicy } from '../../src/rate-limit/rate-limit-setting.js';

describe('rate settings', () => {
  it.each<[string, number, number]>([
    ['50/s', 50, 50],
    ['1/s', 1, 1],
    ['120/min', 2, 120],
    ['30/min', 0.5, 30],
    ['100000', 100_000 / 60, 100_000], // a bare number is per minute, as the flag always took it
  ])('%s is %d a second with a default burst of %d', (text, perSecond, defaultBurst) => {
    expect(parseRate(text)).toEqual({ perSecond, defaultBurst });
  });

  it('reads off as off, and a burst given explicitly over the default', () => {
    expect(parseRateSetting('off')).toBe('off');
    expect(parseRateSetting('5/s')).toEqual({ perSecond: 5, defaultBurst: 5 });
    expect(rateLimitPolicy(parseRate('5/s'), undefined)).toEqual({ perSecond: 5, burst: 5 });
    expect(rateLimitPolicy(parseRate('5/s'), parseBurst('10'))).toEqual({ perSecond: 5, burst: 10 });
  });

  it.each([
    '',
    'abc',
    '0',
    '0/s',
    '-5/s',
    '1.5/s',
    '5/h',
    '5/sec',
    '5 / s',
    's',
    '/s',
    'OFF',
    '99999999999999999999/s',
  ])('refuses the rate %j, saying how to write one', (text) => {
    expect(() => parseRate(text)).toThrow(/is not a rate: write <n>\/s or <n>\/min/);
  });

  it.each(['', '0', '-1', '1.5', '1e3', 'ten', '99999999999999999999'])('refuses the burst %j', (text) => {
    expect(() => parseBurst(text)).toThrow(/is not a burst: write a positive whole number/);
  });
});
