// The web page in a real browser: a real patience-server (the built
// binary, loopback, port 0, a temporary data directory), two `patience
// bot`s racing in one room, and headless Chromium watching it through the
// page. Checks the leaderboard updates live, the room's progress counts
// update live, that nothing the fair-play rule withholds reaches the page
// (no face-up card in its DOM, no rival board or move in its frames)
// before `race_ended`, then the results and the replay. Screenshots go to
// target/web-screenshots/.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';

import { Decoder, encode } from '@msgpack/msgpack';
import WebSocket from 'ws';

import { clientBinary, PATIENCE_MS, screenshots, setUp, step } from './harness.mjs';

const decoder = new Decoder({ useBigInt64: true });
const test = setUp('web');
const { cleanups, scratch } = test;

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
    this.messages = [];
    this.waiters = [];
    socket.on('message', (data) => {
      const message = decoder.decode(data);
      this.messages.push(message);
      this.waiters = this.waiters.filter((waiter) => {
        if (waiter.index < this.messages.length && waiter.matches(message)) {
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

  // The first message from now on that `matches`.
  next(matches) {
    return new Promise((resolve) => this.waiters.push({ index: this.messages.length, matches, resolve }));
  }
}

function bot(address, code, name) {
  const config = mkdtempSync(path.join(scratch, 'bot-'));
  const child = spawn(clientBinary, ['bot', '--join', code, '--pace', '0.12', '--server', `ws://${address}`, '--name', name], {
    env: { ...process.env, PATIENCE_CONFIG_DIR: config },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cleanups.push(() => child.kill('SIGTERM'));
  return child;
}

// ----- What the page shows -----

// The board the page draws: per zone, its face-up cards as drawn, its
// backs and its count badge.
function drawnBoard(page, selector) {
  return page.$$eval(`${selector} .zone`, (zones) => zones.map((zone) => ({
    zone: zone.dataset.zone,
    faces: [...zone.querySelectorAll('.card.face')].map((card) => card.dataset.card),
    backs: zone.querySelectorAll('.card.back').length,
    count: zone.querySelector('.count')?.textContent ?? null,
  })));
}

// What the page should draw for `view`: piles whole, other zones by their
// top card and their size.
function expectedBoard(view) {
  return view.zones.map(({ zone, hidden, face_up: faceUp }) => {
    const key = zone.index === undefined || zone.index === null ? zone.kind : `${zone.kind}-${zone.index}`;
    const total = hidden + faceUp.length;
    if (zone.kind === 'pile') return { zone: key, faces: faceUp, backs: hidden, count: null };
    return {
      zone: key,
      faces: faceUp.length ? [faceUp[faceUp.length - 1]] : [],
      backs: faceUp.length === 0 && hidden > 0 ? 1 : 0,
      count: total > 1 ? String(total) : null,
    };
  });
}

// `expected` (from a board with face-down cards) as the replay draws it
// once the deal is public: each zone's face-down cards turned up beneath
// its face-up ones. The turned-up cards are taken from `drawn`, so what
// this checks is that the face-up cards, their order and every zone's
// size are the final board's, and that no card is drawn face down.
function revealedFinal(expected, drawn) {
  const drawnByZone = new Map(drawn.map((zone) => [zone.zone, zone]));
  return expected.map((zone) => {
    if (zone.backs === 0) return zone;
    const turned = (drawnByZone.get(zone.zone)?.faces ?? []).slice(0, zone.backs);
    if (zone.count === null) return { ...zone, faces: [...turned, ...zone.faces], backs: 0 };
    // A stacked zone shows its top card only: the top is face up already,
    // or was the face-down top now turned.
    return { ...zone, faces: zone.faces.length ? zone.faces : turned.slice(-1), backs: 0 };
  });
}

async function noHorizontalScroll(page, what) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
  }));
  assert.ok(scrollWidth <= innerWidth, `${what}: ${scrollWidth}px wide in a ${innerWidth}px window`);
}

// Every frame a page receives on its WebSockets, decoded.
function recordFrames(page) {
  const frames = [];
  page.on('websocket', (socket) => {
    socket.on('framereceived', ({ payload }) => {
      if (typeof payload !== 'string') frames.push(decoder.decode(payload));
    });
  });
  return frames;
}

// ----- The test -----

async function main() {
  const { address, base } = await test.startServer({ args: ['--countdown-ms', '1500'] });
  step(`server at ${base}`);

  const browser = await test.launch({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2 });

  // --- Today's leaderboards, live ---
  step('the leaderboard page');
  const today = await browser.newPage();
  await today.goto(`${base}/`);
  const tbm = '#lb-three-blind-mice';
  await today.waitForSelector(`${tbm} [data-count="unranked"]`);
  for (const game of ['indian', 'midshipman', 'virginia-reel']) {
    await today.waitForSelector(`#lb-${game} [data-count], #lb-${game} [data-unavailable]`);
  }
  assert.equal(await today.textContent(`${tbm} [data-count="unranked"]`), '0');
  // A new player's attempt, resigned at once: off the ranking, counted.
  const player = await Client.connect(address, 'dora');
  player.send({ type: 'register', name: 'dora' });
  await player.next((message) => message.type === 'registered');
  player.send({ type: 'daily_play', game: 'three-blind-mice' });
  await player.next((message) => message.type === 'daily_started');
  await today.waitForFunction((selector) => document.querySelector(selector)?.textContent === '1',
    `${tbm} [data-count="playing"]`, { timeout: PATIENCE_MS });
  player.send({ type: 'resign' });
  await player.next((message) => message.type === 'daily_finished');
  await today.waitForFunction((selector) => document.querySelector(selector)?.textContent === '1',
    `${tbm} [data-count="unranked"]`, { timeout: PATIENCE_MS });
  // Nobody ranks yet on this fresh server: dora's attempt still stands on
  // the board, marked, with no rank of its own.
  const doraRow = `${tbm} tr[data-unranked="new_account"]`;
  await today.waitForSelector(doraRow, { timeout: PATIENCE_MS });
  assert.match(await today.textContent(doraRow), /dora unranked \(new account\)/);
  assert.equal(await today.textContent(`${doraRow} td.num`), '–');
  await noHorizontalScroll(today, 'the leaderboard page');
  await today.screenshot({ path: path.join(screenshots, 'leaderboard.png'), fullPage: true });

  // --- A room, watched ---
  step('a room of two bots');
  const owner = await Client.connect(address, 'owner');
  owner.send({ type: 'create_room', game: 'three-blind-mice', max_players: 3, public: false, options: { undo_allowed: false, time_limit_ms: 600000, open_boards: false } });
  const joined = await owner.next((message) => message.type === 'room_joined');
  const code = joined.room.code;
  step(`room ${code}`);

  const room = await browser.newPage();
  const frames = recordFrames(room);
  // Notes any face-up card drawn before the page has taken race_ended in.
  await room.addInitScript(() => {
    window.facesBeforeTheEnd = 0;
    new MutationObserver(() => {
      if (document.body && document.body.dataset.raceEnded !== 'true' && document.querySelector('.card.face')) {
        window.facesBeforeTheEnd += 1;
      }
    }).observe(document, { subtree: true, childList: true, attributes: true });
  });
  await room.goto(`${base}/room/${code}`);
  await room.waitForSelector('#racers [data-seat="0"]');

  // The owner leaves during the countdown, which goes on for the bots.
  const countdown = owner.next((message) => message.type === 'countdown');
  const bots = [bot(address, code, 'ada-bot'), bot(address, code, 'bob-bot')];
  await countdown;
  owner.send({ type: 'leave' });
  await owner.next((message) => message.type === 'left');

  await room.waitForSelector('#phase[data-phase="racing"]', { timeout: PATIENCE_MS });
  step('progress, live');
  const movesOf = (seat) => room.textContent(`#racers [data-seat="${seat}"] [data-count="moves"]`).then(Number);
  const seats = await room.$$eval('#racers .racer', (racers) => racers.map((racer) => Number(racer.dataset.seat)));
  assert.equal(seats.length, 2, `two racers, got seats ${seats}`);
  await room.waitForFunction(() => [...document.querySelectorAll('#racers [data-count="moves"]')].some((count) => Number(count.textContent) > 0), null, { timeout: PATIENCE_MS });
  const before = await Promise.all(seats.map(movesOf));
  await room.waitForFunction((counts) => [...document.querySelectorAll('#racers .racer')].some((racer, index) =>
    Number(racer.querySelector('[data-count="moves"]').textContent) > counts[index]), before, { timeout: PATIENCE_MS });
  assert.equal(await room.locator('.card.face').count(), 0, 'no face-up card during the race');
  await noHorizontalScroll(room, 'the room page, racing');
  await room.screenshot({ path: path.join(screenshots, 'room-racing.png'), fullPage: true });

  step('the end, the results, the reveal');
  await room.waitForSelector('#results', { timeout: PATIENCE_MS });
  await Promise.all(bots.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))));
  assert.equal(await room.evaluate(() => window.facesBeforeTheEnd), 0, 'the page drew a face-up card before race_ended');
  const ended = frames.findIndex((frame) => frame.type === 'race_ended');
  assert.ok(ended > 0, 'the page got race_ended');
  const duringRace = frames.slice(0, ended);
  const progressFrames = duringRace.filter((frame) => frame.type === 'progress');
  assert.ok(progressFrames.length > 2, `progress came live (${progressFrames.length} frames)`);
  for (const frame of duringRace) {
    assert.notEqual(frame.type, 'move_accepted', 'a move_accepted reached a spectator');
    if (frame.type === 'progress') {
      assert.equal(frame.board, null, `a rival's board in ${JSON.stringify(frame)}`);
      assert.equal(frame.text, null, `a rival's move in ${JSON.stringify(frame)}`);
    }
    if (frame.type === 'snapshot' && frame.race) {
      for (const entry of frame.race.boards) assert.equal(entry.board, null, 'a board in a snapshot during the race');
    }
  }
  const result = frames[ended].result;
  const standings = await room.$$eval('#standings tbody tr', (rows) => rows.map((row) => row.querySelector('.name').textContent));
  assert.deepEqual(standings, result.standings.map((standing) => standing.name));
  assert.deepEqual([...standings].sort(), ['ada-bot', 'bob-bot']);
  const reveal = await room.textContent('#reveal');
  assert.ok(reveal.includes(`seed ${result.reveal.seed}`) && reveal.includes(result.reveal.salt), reveal);
  await room.waitForSelector('#commitment-check.check-ok');

  step('the replay');
  // Every board, independently: a spectator that comes after the end gets
  // each seat's final board in its snapshot.
  const late = await Client.connect(address, 'late');
  late.send({ type: 'spectate', code });
  const snapshot = await late.next((message) => message.type === 'snapshot');
  await room.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  for (const seat of seats) {
    await room.click(`#replay .tabs button[data-seat="${seat}"]`);
    await room.waitForSelector(`#replay[data-seat="${seat}"][data-step="0"]`);
    const steps = Number(await room.getAttribute('#replay', 'data-steps'));
    const moves = result.logs.find((log) => log.seat === seat).moves.length;
    assert.equal(steps, moves, `seat ${seat}: a step per move`);
    const dealt = await drawnBoard(room, '#replay-board');
    await room.click('#replay [data-action="next"]');
    await room.waitForSelector(`#replay[data-seat="${seat}"][data-step="1"]`);
    assert.notDeepEqual(await drawnBoard(room, '#replay-board'), dealt, `seat ${seat}: the first move changes the board`);
    await room.click('#replay [data-action="last"]');
    await room.waitForSelector(`#replay[data-seat="${seat}"][data-step="${steps}"]`);
    const final = snapshot.race.boards.find((entry) => entry.seat === seat).board;
    const byZone = (zones) => JSON.stringify([...zones].sort((a, b) => a.zone.localeCompare(b.zone)));
    // After the reveal the replay draws every card face up: the final
    // board's face-up cards on top of the ones it still held face down.
    const drawn = byZone(await drawnBoard(room, '#replay-board'));
    assert.equal(drawn, byZone(revealedFinal(expectedBoard(final), await drawnBoard(room, '#replay-board'))),
      `seat ${seat}: the last step is the final board, face down cards turned up`);
  }
  // Played back: the step moves on by itself.
  await room.click(`#replay .tabs button[data-seat="${seats[0]}"]`);
  await room.click('#replay [data-action="play"]');
  await room.waitForFunction(() => Number(document.querySelector('#replay').dataset.step) >= 3);
  await room.click('#replay [data-action="play"]');
  await noHorizontalScroll(room, 'the room page, after the race');
  await room.screenshot({ path: path.join(screenshots, 'room-results.png'), fullPage: true });
  await room.locator('#replay').screenshot({ path: path.join(screenshots, 'replay.png') });

  step('past days');
  const days = await browser.newPage();
  await days.goto(`${base}/days/three-blind-mice`);
  await days.waitForFunction(() => {
    const list = document.querySelector('#days');
    return list && (list.querySelector('.day, .error') || /No closed day/.test(list.textContent));
  });
  assert.equal(await days.locator('#days .error').count(), 0, await days.textContent('#days'));
  await noHorizontalScroll(days, 'the days page');
  await days.screenshot({ path: path.join(screenshots, 'days.png'), fullPage: true });

  step(`screenshots in ${screenshots}`);
}

await test.run(main);
