import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { screenshot } from './browser.js';

const ROOT = join(__dirname, '..', '..', '..');

/** The console bundle the service serves (dist/console), built from the sources under test (Vite: about a second). */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'apps/console/vite.config.mjs'], {
    cwd: ROOT,
    // The production bundle whatever jest set NODE_ENV to (otherwise React's development build is bundled).
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** axe on the page as it is: no violation of any impact (minor and moderate included). */
export async function expectAccessible(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  expect(
    results.violations.map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(' | ')}`),
  ).toEqual([]);
}

/** The page's own content has loaded: no "Loading …" status left. */
export async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => {
    const statuses = (globalThis as any).document.querySelectorAll('[role="status"]') as { textContent: string | null }[];
    return ![...statuses].some((node) => /^Loading/.test(node.textContent ?? ''));
  });
}

/** Checks a page (axe, nothing wider than the viewport) and saves its screenshot. */
export async function checkPage(page: Page, name: string): Promise<string> {
  await settled(page);
  await expectAccessible(page);
  const width = page.viewportSize()!.width;
  // Nothing sticks out of the viewport (wide tables scroll inside their own box).
  const wider = await page.evaluate((limit) => {
    const all = [...(globalThis as any).document.querySelectorAll('body *')] as any[];
    return all.filter((node) => node.getBoundingClientRect().right > limit + 1 && !node.closest('table')).map((node) => `${node.tagName}.${node.className}`);
  }, width);
  expect(wider.slice(0, 5)).toEqual([]);
  return screenshot(page, name);
}

/** The README's picture of the console (docs/console.png): written when missing or with UPDATE_CONSOLE_PNG=1, so runs leave the tree clean. */
export function publishScreenshot(path: string): void {
  const target = join(ROOT, 'docs', 'console.png');
  if (!existsSync(target) || process.env.UPDATE_CONSOLE_PNG === '1') copyFileSync(path, target);
}
