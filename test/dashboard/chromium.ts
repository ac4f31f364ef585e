/** Debian's chromium for playwright-core (no browser download): path and flags known to work here. */
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { locate, SYSTEM_PACKAGES, skipLine } from "../support/system-packages.js";

const found = locate(SYSTEM_PACKAGES.chromium);
export const CHROMIUM = found ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = found !== null;
/** The one line that says why the browser tests skip (null when chromium is installed). */
export const CHROMIUM_SKIP = skipLine(SYSTEM_PACKAGES.chromium);
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** Inside a describe: one chromium for the suite's tests, launched before them and closed after; call the getter in a test. */
export function suiteBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!;
}
