// Finds a Chromium for the Playwright suite: CHROMIUM_PATH, Debian's chromium on PATH, or
// Playwright's own download where one is installed; when there is none, runs Playwright's
// installer and looks again.
import { execSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const PLAYWRIGHT_INSTALL = ['npx', '--no', 'playwright', 'install', 'chromium'];

export async function findChromium() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execSync(`command -v ${name}`, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      if (found) return found;
    } catch {
      // not on PATH
    }
  }
  try {
    const { chromium } = await import('playwright-core');
    const own = chromium.executablePath();
    if (own && fs.existsSync(own)) return own;
  } catch {
    // playwright-core missing or without a browser
  }
  return undefined;
}

/**
 * A Chromium to use, installing Playwright's own when none is found (its output shown);
 * undefined when the installer fails or installs nothing that `find` sees.
 */
export async function provideChromium({ find = findChromium, install = PLAYWRIGHT_INSTALL } = {}) {
  const found = await find();
  if (found) return found;
  console.log(`[test] no Chromium found; installing Playwright's: ${install.join(' ')}`);
  const { status, error } = spawnSync(install[0], install.slice(1), { stdio: 'inherit' });
  if (status !== 0) {
    console.error(`[test] ${install.join(' ')} failed (${error?.message ?? `exit ${status}`})`);
    return undefined;
  }
  return find();
}

export const CHROMIUM_MISSING = `No Chromium for the browser tests, and Playwright's installer could not provide one. Install one:
  Debian/Ubuntu:  sudo apt-get install -y chromium
or point CHROMIUM_PATH at a Chromium or Chrome binary.`;
