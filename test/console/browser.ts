// Debian's Chromium driven by Playwright's library (playwright-core: no browser download), for the
// admin console's tests. Missing Chromium fails the run: .ci/run installs it, and nothing skips.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';

/** Where the screenshots go (git-ignored; the README names it). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../console-screenshots/', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does.`,
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Runs axe-core in the page and fails on any serious or critical violation. The engine goes in through
 * the DevTools protocol (page.evaluate), which the page's CSP does not govern: an injected <script>
 * would be refused, as it should be.
 */
export async function expectNoSeriousAxeViolations(page: Page, screen: string): Promise<void> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    const results = await (globalThis as unknown as { axe: typeof axe }).axe.run(
      { exclude: [] },
      { resultTypes: ['violations'] },
    );
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 5),
      }));
  });
  expect(violations, `axe on ${screen}`).toEqual([]);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
