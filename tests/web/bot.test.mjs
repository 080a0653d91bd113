// A race against a server bot from the page, in a real browser: a real
// patience-server (the built binary, loopback) and headless Chromium.
// The player opens "race a bot" (a strong bot at a quick pace), the bot's
// seat is marked as a bot wherever it is shown, the player makes a move by
// drag and drop, the bot wins, the player resigns, and the page shows the
// results (the bot marked) and the replay. Every frame the page received
// passes the fair-play check. No console error.
//
// Then the account: registered in the page, still signed in after a
// reload (the token in the browser's storage, never in a URL), a sign-in
// code shown and redeemed in a second browser, which signs out while the
// first stays signed in.
//
// Needs a server with bot seats and sign-in codes (`bots` in create_room,
// `request_sign_in_code`, `redeem_sign_in_code`, `sign_out`;
// docs/PROTOCOL.md).
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';

import { checkFairPlay, dragAMove, PATIENCE_MS, screenshots, setUp, step, wire } from './harness.mjs';

const test = setUp('bot');

async function main() {
  const { base } = await test.startServer();
  step(`server at ${base}`);
  const context = await test.launch({ viewport: { width: 1280, height: 900 } });

  step('race a strong bot from the chooser');
  const page = await context.newPage();
  const pageWire = wire(page, base);
  await pageWire.ready;
  await page.goto(`${base}/practice`);
  const link = await page.getAttribute('[data-bot-race="three-blind-mice-strong"]', 'href');
  await page.goto(`${base}${link}&pace=200`);
  await page.fill('#player-name', 'ada');
  await page.click('#name-form button');
  await page.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  await page.waitForSelector('#racers [data-seat="1"] .bot-mark[data-bot="strong"]', { timeout: PATIENCE_MS });
  await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  assert.ok(await dragAMove(page), 'the player has a move');
  await page.screenshot({ path: path.join(screenshots, 'race-bot-racing-1280.png'), fullPage: true });

  step('the bot wins; the player resigns');
  await page.waitForSelector('#racers [data-seat="1"] .status-won', { timeout: PATIENCE_MS });
  await page.click('#resign');
  await page.waitForSelector('#results', { timeout: PATIENCE_MS });
  await page.waitForSelector('#standings .bot-mark[data-bot="strong"]');
  await page.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  await page.screenshot({ path: path.join(screenshots, 'race-bot-results-1280.png'), fullPage: true });
  checkFairPlay(pageWire.frames, 0, 'the player');

  step('the account: register, reload, a sign-in code for another browser, sign out there');
  const account = await context.newPage();
  await account.goto(`${base}/account`);
  await account.fill('#register-name', 'ada');
  await account.click('#register-form button');
  await account.waitForSelector('#signed-in-as');
  assert.ok(!account.url().includes('token'), 'no token in the address');
  await account.reload();
  await account.waitForSelector('#signed-in-as');
  await account.click('#show-code');
  await account.waitForSelector('#sign-in-code');
  const code = await account.textContent('#sign-in-code');
  assert.match(code, /^[34679ACDEFGHJKMNPQRTWXY]{4}-[34679ACDEFGHJKMNPQRTWXY]{4}$/);
  await account.screenshot({ path: path.join(screenshots, 'account-code-1280.png'), fullPage: true });
  const other = await test.launch({ viewport: { width: 390, height: 844 } });
  const phone = await other.newPage();
  await phone.goto(`${base}/account`);
  await phone.fill('#redeem-code', code.toLowerCase().replace('-', ' '));
  await phone.click('#redeem-form button');
  await phone.waitForSelector('#signed-in-as');
  assert.equal(await phone.textContent('#signed-in-as strong'), 'ada');
  await phone.screenshot({ path: path.join(screenshots, 'account-signed-in-390.png'), fullPage: true });
  await phone.click('#sign-out');
  await phone.waitForSelector('#register-form');
  await phone.reload();
  await phone.waitForSelector('#register-form');
  await account.reload();
  await account.waitForSelector('#signed-in-as');
}

await test.run(main);
