// Bounded polling, for every suite: what a test waits for, how long at most, and how to look.

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` every 50 ms until it returns something other than undefined, and returns that. A
 * probe that throws counts as "not yet" (a server still starting refuses connections); after
 * `timeoutMs` the wait fails, naming `what` and the probe's last error.
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `gave up after ${timeoutMs} ms waiting for ${what}${lastError === undefined ? '' : ` (last error: ${String(lastError)})`}`,
      );
    }
    await sleep(50);
  }
}
