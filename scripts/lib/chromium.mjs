// Finds a Chromium for the Playwright suite: CHROMIUM_PATH, Debian's chromium on PATH, or
// Playwright's own download where one is installed.
import { execSync } from 'node:child_process';
import fs from 'node:fs';

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

export const CHROMIUM_MISSING = `No Chromium found for the browser tests. Install one:
  Debian/Ubuntu:  sudo apt-get install -y chromium
  elsewhere:      npx playwright install chromium
or point CHROMIUM_PATH at a Chromium or Chrome binary.`;
