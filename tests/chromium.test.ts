// `npm test` provides its browser: Playwright's installer runs only when no Chromium is found,
// and a failed or empty install leaves none (scripts/test.mjs then says what to install).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { provideChromium } from '../scripts/lib/chromium.mjs';

describe('provideChromium', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-chromium-'));
  const browser = path.join(dir, 'chrome');
  const installed = path.join(dir, 'installer-ran');
  const find = async () => (fs.existsSync(browser) ? browser : undefined);
  // stands in for `npx playwright install chromium`: leaves a mark, and a browser when told to
  const installer = (providesBrowser: boolean, exitCode = 0) => [
    process.execPath,
    '-e',
    `const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(installed)}, ''); ${providesBrowser ? `fs.writeFileSync(${JSON.stringify(browser)}, '');` : ''} process.exit(${exitCode})`,
  ];
  afterEach(() => {
    for (const file of [browser, installed]) fs.rmSync(file, { force: true });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('uses the Chromium it finds without running the installer', async () => {
    fs.writeFileSync(browser, '');
    expect(await provideChromium({ find, install: installer(true) })).toBe(browser);
    expect(fs.existsSync(installed)).toBe(false);
  });

  it('runs the installer when none is found, then uses what it installed', async () => {
    expect(await provideChromium({ find, install: installer(true) })).toBe(browser);
    expect(fs.existsSync(installed)).toBe(true);
  });

  it('gives none when the installer fails, or succeeds without leaving a browser', async () => {
    expect(await provideChromium({ find, install: installer(true, 1) })).toBeUndefined();
    fs.rmSync(browser);
    expect(await provideChromium({ find, install: installer(false) })).toBeUndefined();
    expect(await provideChromium({ find, install: ['/nonexistent/installer'] })).toBeUndefined();
  });
});
