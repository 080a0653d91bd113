// Ratings in a real browser: a real patience-server (the built binary,
// loopback, quick races of two seats) where two registered players, as
// protocol clients, race a quick race and both resign (nobody won: they
// tie, and both grow surer); then Ada's page, signed in with her stored
// token, shows the game's rating list with both, her row marked, and her
// own rating and rated race; and the lobby page shows Ada's rating beside
// her name while she waits in a public room. No console error.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Decoder, encode } from '@msgpack/msgpack';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';

import { CHROMIUM_ARGS, PATIENCE_MS, runTest, step } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const serverBinary = process.env.PATIENCE_SERVER_BIN ?? path.join(target, 'debug', 'patience-server');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

const decoder = new Decoder({ useBigInt64: true });
const cleanups = [];
const scratch = mkdtempSync(path.join(tmpdir(), 'patience-ratings-'));
cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));

async function startServer() {
  const data = path.join(scratch, 'data');
  mkdirSync(data);
  const config = path.join(scratch, 'config.toml');
  writeFileSync(config, 'quick_race_seats = 2\n');
  const child = spawn(serverBinary, [
    '--config', config, '--listen', '127.0.0.1:0', '--no-admin', '--data', data,
    '--games', 'three-blind-mice', '--countdown-ms', '200', '--deal-pool-size', '2',
  ], {
    env: { ...process.env, RUST_LOG: 'warn', PATIENCE_DAILY_SECRET: '5e'.repeat(32) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => child.kill('SIGTERM'));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`patience-server exited (${code}) before printing its address`)));
  });
  const address = /ws:\/\/(\S+)/.exec(first)?.[1];
  assert.ok(address, `an address in ${JSON.stringify(first)}`);
  return address;
}

// A protocol client over `ws`: a way to send, and to wait for the next
// message that matches.
class Client {
  static async connect(address, name) {
    const client = new Client(new WebSocket(`ws://${address}/`));
    await new Promise((resolve, reject) => {
      client.socket.once('open', resolve);
      client.socket.once('error', reject);
    });
    client.send({ type: 'hello', version: 1, name });
    await client.next((message) => message.type === 'welcome');
    cleanups.push(() => client.socket.close());
    return client;
  }

  constructor(socket) {
    this.socket = socket;
    this.waiters = [];
    socket.on('message', (data) => {
      const message = decoder.decode(data);
      this.waiters = this.waiters.filter((waiter) => {
        if (waiter.matches(message)) {
          waiter.resolve(message);
          return false;
        }
        return true;
      });
    });
  }

  send(message) {
    this.socket.send(encode(message));
  }

  next(matches) {
    return new Promise((resolve) => this.waiters.push({ matches, resolve }));
  }
}

async function main() {
  const address = await startServer();
  const base = `http://${address}`;

  step('ada and bob register and race a quick race; both resign');
  const players = [];
  for (const name of ['ada', 'bob']) {
    const client = await Client.connect(address, name);
    const registered = client.next((message) => message.type === 'registered');
    client.send({ type: 'register', name });
    players.push({ client, token: (await registered).token });
  }
  const started = players.map(({ client }) => client.next((message) => message.type === 'race_started'));
  for (const { client } of players) client.send({ type: 'quick_race', game: 'three-blind-mice' });
  await Promise.all(started);
  const ended = players.map(({ client }) => client.next((message) => message.type === 'race_ended'));
  for (const { client } of players) client.send({ type: 'resign' });
  await Promise.all(ended);

  step("ada's page shows the rating list, her row marked, and her rated race");
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  cleanups.push(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const token = players[0].token;
  await context.addInitScript((stored) => {
    localStorage.setItem('patience-token', stored);
    localStorage.setItem('patience-name', 'ada');
  }, token);
  const page = await context.newPage();
  page.setDefaultTimeout(PATIENCE_MS);
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(`${base}/ratings/three-blind-mice`);
  await page.waitForSelector('#ratings tr[data-name="ada"]');
  await page.waitForSelector('#ratings tr[data-name="bob"]');
  assert.equal(await page.getAttribute('#ratings tr[data-name="ada"]', 'class'), 'own');
  assert.equal(await page.getAttribute('#ratings tr[data-name="bob"]', 'class'), null);
  // A tie of two new players: μ stays 25, σ falls to 8.07, so μ − 3σ is 0.8;
  // provisional.
  for (const name of ['ada', 'bob']) {
    assert.equal(await page.textContent(`#ratings tr[data-name="${name}"] td.rating`), '0.8?');
  }
  await page.waitForSelector('#own-rating-line');
  const line = await page.textContent('#own-rating-line');
  assert.match(line, /ada · rating 0\.8\? \(μ 25\.0, σ 8\.1\) after 1 rated race · provisional/);
  assert.equal(await page.locator('#rating-history tbody tr').count(), 1);
  assert.equal(await page.textContent('#rating-history tbody tr td:nth-child(2)'), '1 of 2');
  assert.equal(await page.getAttribute('#nav-ratings', 'aria-current'), 'page');

  step("the lobby shows a waiting player's rating beside her name");
  const waiting = await Client.connect(address, 'ada');
  const authenticated = waiting.next((message) => message.type === 'authenticated');
  waiting.send({ type: 'authenticate', token });
  await authenticated;
  const joined = waiting.next((message) => message.type === 'room_joined');
  waiting.send({
    type: 'create_room', game: 'three-blind-mice', max_players: 3, public: true,
    options: { undo_allowed: false, time_limit_ms: null, open_boards: false }, bots: [],
  });
  const code = (await joined).room.code;
  await page.goto(`${base}/lobby`);
  const row = `#lobby-table tr[data-code="${code}"]`;
  await page.waitForSelector(row);
  assert.match(await page.textContent(row), /ada \(0\.8\?\)/);

  step('a guest sees the list and is asked to register');
  const guest = await browser.newPage();
  guest.on('pageerror', (error) => errors.push(String(error)));
  await guest.goto(`${base}/ratings`);
  await guest.waitForSelector('#ratings tr[data-name="bob"]');
  await guest.waitForSelector('#own-rating a[href="/account"]');
  assert.deepEqual(errors, [], 'no console error');
}

await runTest('ratings', main, cleanups);
