/**
 * Debian's Chromium through playwright-core (no browser download), as the web e2e test and scripts/screenshots.ts
 * launch it: headless, no sandbox, no background traffic, a fake microphone allowed without a prompt (voice
 * dictation). `CHROMIUM_PATH` names another binary.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A headless Chromium from CHROMIUM; throws when the binary cannot start. */
export function launchChromium(): Promise<Browser> {
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
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
    ],
  });
}
