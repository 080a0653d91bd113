// What the page's browser tests share: Chromium's flags, their progress
// lines, the frames a page receives, the fair-play check on them, a move
// made by mouse drag and drop on a page's own board, and how a test file
// runs and cleans up.

import assert from 'node:assert/strict';

import { Decoder } from '@msgpack/msgpack';

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
