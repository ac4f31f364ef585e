/** Debian's chromium for playwright-core (no browser download): path and flags known to work here. */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
