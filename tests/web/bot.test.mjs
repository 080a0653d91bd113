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
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { checkFairPlay, CHROMIUM_ARGS, dragAMove, PATIENCE_MS, runTest, step, wire } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const serverBinary = process.env.PATIENCE_SERVER_BIN ?? path.join(target, 'debug', 'patience-server');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const screenshots = path.join(target, 'web-screenshots');

const cleanups = [];
const scratch = mkdtempSync(path.join(tmpdir(), 'patience-race-'));
cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
const data = path.join(scratch, 'data');
mkdirSync(data);

// Starts the server on `listen` (port 0 the first time; the same port
// after a restart, so the pages find it again).
async function startServer(listen) {
  const child = spawn(serverBinary, [
    '--listen', listen, '--no-admin', '--data', data,
    '--games', 'three-blind-mice', '--countdown-ms', '1000', '--deal-pool-size', '2',
  ], {
    env: { ...process.env, RUST_LOG: 'warn', PATIENCE_DAILY_SECRET: '5e'.repeat(32) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) resolve();
    else {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    }
  });
  cleanups.push(stop);
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`patience-server exited (${code}) before printing its address`)));
  });
  const address = /ws:\/\/(\S+)/.exec(first)?.[1];
  assert.ok(address, `an address in ${JSON.stringify(first)}`);
  return { address, stop };
}

async function main() {
  mkdirSync(screenshots, { recursive: true });
  const server = await startServer('127.0.0.1:0');
  const base = `http://${server.address}`;
  step(`server at ${base}`);
  const pageErrors = [];
  const profile = mkdtempSync(path.join(scratch, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  cleanups.push(() => context.close());
  context.on('weberror', (error) => pageErrors.push(String(error.error())));
  context.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });

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
  const otherProfile = mkdtempSync(path.join(scratch, 'chromium-'));
  const other = await chromium.launchPersistentContext(otherProfile, {
    executablePath: chromiumPath, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'],
    viewport: { width: 390, height: 844 },
  });
  cleanups.push(() => other.close());
  other.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
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
  assert.deepEqual(pageErrors, [], 'the pages logged errors');
}

await runTest('bot', main, cleanups);
