// What the page's browser tests share: the setup every test file repeats
// (a scratch directory, a real patience-server, browser contexts whose
// console errors are caught), Chromium's flags, their progress lines, the
// frames a page receives, the fair-play check on them, a move made by
// mouse drag and drop on a page's own board, and how a test file runs
// and cleans up.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Decoder } from '@msgpack/msgpack';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
export const serverBinary = process.env.PATIENCE_SERVER_BIN ?? path.join(target, 'debug', 'patience-server');
export const clientBinary = process.env.PATIENCE_BIN ?? path.join(target, 'debug', 'patience');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Where the tests keep their screenshots.
export const screenshots = path.join(target, 'web-screenshots');

// How long a test waits for the page before it gives up.
export const PATIENCE_MS = 180_000;

const decoder = new Decoder({ useBigInt64: true });

// Headless Chromium on a machine with no network beyond loopback: without
// the background-networking flags it keeps trying to reach Google's hosts.
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function step(text) {
  console.log(`-- ${text}`);
}

// Every frame a page receives on its WebSockets, decoded, and a way to
// cut its socket from the server's side (the page sees a dropped
// connection).
export function wire(page, base) {
  const frames = [];
  const sockets = [];
  const ready = page.routeWebSocket(`${base.replace('http', 'ws')}/`, (socket) => {
    const server = socket.connectToServer();
    server.onMessage((message) => {
      if (typeof message !== 'string') frames.push(decoder.decode(message));
      socket.send(message);
    });
    sockets.push({ socket, server });
  });
  const cut = () => Promise.all(sockets.splice(0).map(async ({ socket, server }) => {
    await server.close().catch(() => {});
    await socket.close().catch(() => {});
  }));
  return { frames, ready, cut };
}

// The frames a racer at `seat` (null: a spectator) got before the race
// ended carry no rival's board or move.
export function checkFairPlay(frames, seat, who) {
  const ended = frames.findIndex((frame) => frame.type === 'race_ended');
  assert.ok(ended > 0, `${who} got race_ended`);
  for (const frame of frames.slice(0, ended)) {
    if (frame.type === 'progress') {
      assert.equal(frame.board, null, `${who}: a rival's board in ${JSON.stringify(frame)}`);
      assert.equal(frame.text, null, `${who}: a rival's move in ${JSON.stringify(frame)}`);
    }
    if (frame.type === 'move_accepted') assert.notEqual(seat, null, `${who}: a move_accepted to a spectator`);
    if (frame.type === 'snapshot' && frame.race) {
      for (const entry of frame.race.boards) {
        if (entry.seat !== seat) assert.equal(entry.board, null, `${who}: seat ${entry.seat}'s board in a snapshot`);
      }
    }
  }
}

// Plays one move on `page`'s own board by mouse drag and drop: picks up
// face-up cards until the engine lights a place for one, and drops it
// there.
// Returns whether a move was made.
export async function dragAMove(page) {
  const before = Number(await page.textContent('#my-seat-moves').catch(() => '0'));
  // The board's foot in sight: a place below the window cannot be dropped
  // on (the pointer lands on nothing and the card stays picked).
  await page.locator('#my-board').evaluate((board) => board.scrollIntoView({ block: 'end' }));
  const viewport = page.viewportSize();
  // Every face-up card that can be picked, top cards first.
  const cards = page.locator('#my-board [data-depth].face');
  const count = await cards.count();
  for (let index = 0; index < count; index += 1) {
    await cards.nth(index).scrollIntoViewIfNeeded();
    const box = await cards.nth(index).boundingBox();
    await page.mouse.move(box.x + 8, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(box.x + 20, box.y + 25, { steps: 3 });
    const target = page.locator('#my-board .zone.target').first();
    const spot = (await target.count()) ? await target.boundingBox() : null;
    const inSight = spot && spot.y >= 0 && spot.y + 6 < viewport.height && spot.x >= 0 && spot.x + spot.width / 2 < viewport.width;
    if (inSight) {
      await page.mouse.move(spot.x + spot.width / 2, spot.y + 6, { steps: 5 });
      await page.mouse.up();
      await page.waitForFunction((moves) => (Number(document.querySelector('#my-seat-moves')?.textContent ?? 0) > moves
        && document.querySelector('#my-board .board')?.dataset.pending === '0')
        || document.querySelector('#race-message')?.dataset.kind === 'error', before, { timeout: PATIENCE_MS });
      assert.notEqual(await page.getAttribute('#race-message', 'data-kind'), 'error', await page.textContent('#race-message'));
      return true;
    }
    await page.mouse.move(box.x + 8, box.y + 5, { steps: 2 });
    await page.mouse.up();
  }
  return false;
}

// Runs a test file's `main`, prints `NAME test: ok` if it passes, runs
// every cleanup (last registered first) whatever happened, and exits with
// the test's status.
export async function runTest(name, main, cleanups) {
  let failed = false;
  try {
    await main();
    console.log(`${name} test: ok`);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // Already gone.
      }
    }
  }
  process.exit(failed ? 1 : 0);
}

// One test file's setup: a scratch directory, the servers it starts and
// the browser contexts it launches, all cleaned up by `run`. Every
// console error and uncaught page error lands in `pageErrors`, except
// those `ignoredErrors` matches (a test that cuts sockets expects
// Chromium to log the failed reconnections).
export function setUp(name, { ignoredErrors = null } = {}) {
  const cleanups = [];
  const scratch = mkdtempSync(path.join(tmpdir(), `patience-${name}-`));
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  mkdirSync(screenshots, { recursive: true });
  const data = path.join(scratch, 'data');
  mkdirSync(data);
  const pageErrors = [];

  // Starts patience-server on `listen` (port 0 the first time; the same
  // address again after a restart, so the pages find it, with the same
  // data). `config`: a config file's text; `args`: more flags.
  async function startServer({ listen = '127.0.0.1:0', config = null, args = ['--countdown-ms', '1000'] } = {}) {
    const configArgs = [];
    if (config !== null) {
      const file = path.join(scratch, 'config.toml');
      writeFileSync(file, config);
      configArgs.push('--config', file);
    }
    const child = spawn(serverBinary, [
      ...configArgs, '--listen', listen, '--no-admin', '--data', data,
      '--games', 'three-blind-mice', '--deal-pool-size', '2', ...args,
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
    // The start message: the WebSocket address first, the page's last.
    const lines = createInterface({ input: child.stdout });
    const printed = [];
    await new Promise((resolve, reject) => {
      lines.on('line', (line) => {
        printed.push(line);
        if (line.startsWith('the web page:')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`patience-server exited (${code}) before printing its addresses`)));
    });
    const address = /ws:\/\/(\S+)$/.exec(printed[0])?.[1];
    assert.ok(address, `a WebSocket address in ${JSON.stringify(printed[0])}`);
    return { address, base: `http://${address}`, printed, stop };
  }

  // A browser context of its own (a profile: its own storage), with
  // playwright's `options` (viewport, touch).
  async function launch(options = {}) {
    const profile = mkdtempSync(path.join(scratch, 'chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: CHROMIUM_ARGS,
      ...options,
    });
    cleanups.push(() => context.close());
    context.on('weberror', (error) => pageErrors.push(String(error.error())));
    context.on('console', (message) => {
      if (message.type() === 'error' && !ignoredErrors?.test(message.text())) pageErrors.push(message.text());
    });
    return context;
  }

  return {
    scratch,
    cleanups,
    pageErrors,
    startServer,
    launch,
    // Runs `main`, then checks that no page logged an error.
    run: (main) => runTest(name, async () => {
      await main();
      assert.deepEqual(pageErrors, [], 'the pages logged errors');
    }, cleanups),
  };
}
