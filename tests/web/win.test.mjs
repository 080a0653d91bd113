// A race won in the page, in a real browser: a real patience-server (the
// built binary, loopback), two browser contexts racing in a private room
// and a third watching at phone size. One racer follows hints by mouse
// drag and drop until it wins; the hints come from the page's own rules
// engine (WebAssembly) asked about that racer's board as the server sent
// it (its face-down cards unknown, as they are to the player); the other
// racer makes a move and resigns. Every page shows the results (the
// winner first, won) and the replay; every frame each page received
// passes the fair-play check. No console error.
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

import { Decoder } from '@msgpack/msgpack';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const serverBinary = process.env.PATIENCE_SERVER_BIN ?? path.join(target, 'debug', 'patience-server');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const screenshots = path.join(target, 'web-screenshots');
const PATIENCE_MS = 180_000;

const decoder = new Decoder({ useBigInt64: true });
const cleanups = [];
const scratch = mkdtempSync(path.join(tmpdir(), 'patience-win-'));
cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
const data = path.join(scratch, 'data');
mkdirSync(data);

function step(text) {
  console.log(`-- ${text}`);
}

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

// Every frame a page receives on its WebSockets, decoded, and a way to
// cut its socket from the server's side (the page sees a dropped
// connection).
function wire(page, base) {
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
function checkFairPlay(frames, seat, who) {
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
async function dragAMove(page) {
  const before = Number(await page.textContent('#my-seat-moves').catch(() => '0'));
  // Every face-up card that can be picked, top cards first.
  const cards = page.locator('#my-board [data-depth].face');
  const count = await cards.count();
  for (let index = 0; index < count; index += 1) {
    const box = await cards.nth(index).boundingBox();
    await page.mouse.move(box.x + 8, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(box.x + 20, box.y + 25, { steps: 3 });
    const target = page.locator('#my-board .zone.target').first();
    if (await target.count()) {
      const spot = await target.boundingBox();
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


// The racer's own board as the server last sent it: the frame that
// answered its last move, or the race's start, or a snapshot; numbers
// made plain for the page.
function ownBoard(frames, seat) {
  for (let index = frames.length - 1; index >= 0; index -= 1) {
    const frame = frames[index];
    let board = null;
    if (frame.type === 'move_accepted' || frame.type === 'race_started') board = frame.board;
    if (frame.type === 'snapshot' && frame.race) board = frame.race.boards.find((entry) => entry.seat === seat)?.board;
    if (board) return JSON.parse(JSON.stringify(board, (key, value) => (typeof value === 'bigint' ? Number(value) : value)));
  }
  throw new Error(`no board of seat ${seat} in the frames`);
}

// The page's engine's hint for `board` (the racer's view; hidden cards
// guessed), from a copy of the engine the page loads.
function askHint(page, board) {
  return page.evaluate(async (view) => {
    if (!globalThis.testHinter) {
      globalThis.testHinter = await globalThis.PatienceEngine.Engine.create(await globalThis.PatienceEngine.Engine.compile());
    }
    return globalThis.testHinter.ask({ op: 'hint', position: { game: view.game, view, moves: [] }, budget: 2000000 });
  }, board);
}

function zoneSelector(zone) {
  let selector = `[data-zone-kind="${zone.kind}"]`;
  if (zone.index !== undefined && zone.index !== null) selector += `[data-zone-index="${zone.index}"]`;
  return selector;
}

// Plays `move` (from the hinter) on `page`'s own board by mouse drag and
// drop, and waits for the server's answer.
async function dragMove(page, move) {
  const before = Number(await page.textContent('#my-seat-moves'));
  const card = page.locator(`#my-board ${zoneSelector(move.from)}[data-depth="${move.depth}"][tabindex]`);
  await card.scrollIntoViewIfNeeded();
  const box = await card.boundingBox();
  if (move.to) {
    await page.mouse.move(box.x + 8, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(box.x + 20, box.y + 25, { steps: 3 });
    const place = page.locator(`#my-board .zone.target${zoneSelector(move.to)}`);
    assert.equal(await place.count(), 1, `the engine lights ${JSON.stringify(move.to)} for ${move.text}`);
    const spot = await place.boundingBox();
    await page.mouse.move(spot.x + spot.width / 2, spot.y + 6, { steps: 5 });
    await page.mouse.up();
  } else {
    await page.mouse.dblclick(box.x + 8, box.y + 5);
  }
  await page.waitForFunction((moves) => (Number(document.querySelector('#my-seat-moves')?.textContent ?? 0) > moves
    && document.querySelector('#my-board .board')?.dataset.pending === '0')
    || document.querySelector('#race-message')?.dataset.kind === 'error', before, { timeout: PATIENCE_MS });
  assert.notEqual(await page.getAttribute('#race-message', 'data-kind'), 'error', await page.textContent('#race-message'));
}

async function main() {
  mkdirSync(screenshots, { recursive: true });
  const server = await startServer('127.0.0.1:0');
  const base = `http://${server.address}`;
  step(`server at ${base}`);

  const pageErrors = [];
  const launch = async (options) => {
    const profile = mkdtempSync(path.join(scratch, 'chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      ...options,
    });
    cleanups.push(() => context.close());
    context.on('weberror', (error) => pageErrors.push(String(error.error())));
    context.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    return context;
  };
  const adaContext = await launch({ viewport: { width: 1280, height: 900 } });
  const bobContext = await launch({ viewport: { width: 1280, height: 900 } });
  const watchContext = await launch({ viewport: { width: 390, height: 844 } });

  step('ada opens a private room, bob takes a seat from its link, a third page watches');
  const ada = await adaContext.newPage();
  const adaWire = wire(ada, base);
  await adaWire.ready;
  await ada.goto(`${base}/race/three-blind-mice?private`);
  await ada.fill('#player-name', 'ada');
  await ada.click('#name-form button');
  await ada.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  const code = ada.url().split('/').pop();
  await ada.waitForSelector('#my-seat-line[data-seat="0"]');
  const bob = await bobContext.newPage();
  const bobWire = wire(bob, base);
  await bobWire.ready;
  await bob.goto(`${base}/room/${code}`);
  await bob.click('#take-seat');
  await bob.fill('#player-name', 'bob');
  await bob.click('#name-form button');
  await bob.waitForSelector('#my-seat-line[data-seat="1"]');
  const watcher = await watchContext.newPage();
  const watchWire = wire(watcher, base);
  await watchWire.ready;
  await watcher.goto(`${base}/room/${code}`);
  await watcher.waitForSelector('#racers [data-seat="1"]');
  await ada.waitForSelector('#start-early');
  await ada.click('#start-early');
  for (const page of [ada, bob]) await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await watcher.waitForSelector('#phase[data-phase="racing"]', { timeout: PATIENCE_MS });
  assert.ok(await dragAMove(bob), 'bob has a move');

  step('ada follows the engine\'s hints by drag and drop until she wins');
  let moves = 0;
  while (!(await ada.locator('#racers [data-seat="0"] .status-won').count())) {
    assert.ok(moves < 500, 'no win within 500 moves');
    const hint = await askHint(ada, ownBoard(adaWire.frames, 0));
    assert.equal(hint.kind, 'play', `the hint after ${moves} moves: ${JSON.stringify(hint)}`);
    await dragMove(ada, hint.move);
    moves += 1;
    if (moves === 10) await ada.screenshot({ path: path.join(screenshots, 'race-winning-1280.png'), fullPage: true });
  }
  step(`ada won in ${moves} moves`);

  step('bob resigns: the results and the replay on every page');
  await bob.click('#resign');
  for (const page of [ada, bob, watcher]) {
    await page.waitForSelector('#results', { timeout: PATIENCE_MS });
    await page.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
    const first = await page.$eval('#standings tbody tr', (row) => ({
      seat: row.dataset.seat, name: row.querySelector('.name').textContent, won: !!row.querySelector('.status-won'),
    }));
    assert.deepEqual(first, { seat: '0', name: 'ada', won: true });
    assert.equal(await page.$eval('#standings tbody tr[data-seat="0"] td:nth-child(5)', (cell) => cell.textContent), String(moves));
  }
  await ada.screenshot({ path: path.join(screenshots, 'race-won-results-1280.png'), fullPage: true });
  await watcher.screenshot({ path: path.join(screenshots, 'race-won-results-watching-390.png'), fullPage: true });

  checkFairPlay(adaWire.frames, 0, 'ada');
  checkFairPlay(bobWire.frames, 1, 'bob');
  checkFairPlay(watchWire.frames, null, 'the watcher');
  assert.deepEqual(pageErrors, [], 'the pages logged errors');
  step(`screenshots in ${screenshots}`);
}

let failed = false;
try {
  await main();
  console.log('win test: ok');
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
