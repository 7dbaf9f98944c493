// When an admin console session ends (src/domain/console-sessions/console-sessions.rules.ts): an hour after its last
// recorded use, eight hours after it began, whichever comes first; uses recorded once a minute.
import { describe, expect, it } from 'vitest';
import {
  consoleSessionExpiry,
  consoleSessionTouch,
  isConsoleSessionLive,
} from '../../src/domain/console-sessions/console-sessions.rules.js';

const at = (minutes: number) => new Date(Date.parse('2026-11-25T10:00:00.000Z') + minutes * 60_000).toISOString();
const session = (createdMinute: number, lastSeenMinute: number) => ({
  id: 1,
  apiTokenId: 2,
  createdAt: at(createdMinute),
  lastSeenAt: at(lastSeenMinute),
  expiresAt: consoleSessionExpiry(at(createdMinute), at(lastSeenMinute)),
});

describe('console session expiry', () => {
  it('ends an hour after the last recorded use', () => {
    expect(consoleSessionExpiry(at(0), at(0))).toBe(at(60));
    expect(consoleSessionExpiry(at(0), at(100))).toBe(at(160));
    expect(isConsoleSessionLive(session(0, 100), at(159.99))).toBe(true);
    expect(isConsoleSessionLive(session(0, 100), at(160))).toBe(false);
  });

  it('ends eight hours after it began, however recently it was used', () => {
    expect(consoleSessionExpiry(at(0), at(470))).toBe(at(480));
    expect(isConsoleSessionLive(session(0, 479), at(479.99))).toBe(true);
    expect(isConsoleSessionLive(session(0, 479), at(480))).toBe(false);
  });

  it('records a use at most once a minute, moving the expiry with it', () => {
    expect(consoleSessionTouch(session(0, 10), at(10.99))).toBeNull();
    expect(consoleSessionTouch(session(0, 10), at(11))).toEqual({ lastSeenAt: at(11), expiresAt: at(71) });
    expect(consoleSessionTouch(session(0, 450), at(451))).toEqual({ lastSeenAt: at(451), expiresAt: at(480) });
  });
});
