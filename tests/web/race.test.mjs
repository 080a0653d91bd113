// A race played in the page, in a real browser: a real patience-server
// (the built binary, loopback), two browser contexts racing in a private
// room (one opens it and shares its link, the other takes a seat from the
// link; each asked its name once), a third watching. Cards move by mouse
// drag and drop; one racer's socket is cut mid-race and the server is
// restarted with SIGTERM mid-race, and both seats come back with no
// click. The race's clock ticks on every page between the server's
// messages; one racer resigns and her time stands still while the
// other's runs on; then he resigns, and every page shows the results and
// the replay. Then one racer registers, reads the daily's terms (no card
// comes before she starts), plays the daily deal (one move, then
// resigns) with the standings live beside the board, and cannot play it
// twice. Every frame each page received passes the fair-play check: no
// rival board and no rival move before race_ended. No console error.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';

import { checkFairPlay, dragAMove, PATIENCE_MS, screenshots, setUp, step, wire } from './harness.mjs';

// A dropped socket and the restart are part of the test: Chromium logs
// the failed reconnections as errors.
const test = setUp('race', { ignoredErrors: /WebSocket connection to .* failed/ });

// A racer's time in the racers' panel.
function clockOf(seat) {
  return `#racers [data-seat="${seat}"] [data-count="elapsed"]`;
}

// Waits until the clock at `selector` on `page` reads later than `shown`
// (a clock's text, "m:ss.s"): the clock runs.
async function clockPasses(page, selector, shown) {
  await page.waitForFunction(([where, before]) => {
    const millis = (text) => {
      const [minutes, seconds] = text.split(':');
      return Number(minutes) * 60_000 + Number(seconds) * 1000;
    };
    const now = document.querySelector(where)?.textContent;
    return now !== undefined && millis(now) > millis(before);
  }, [selector, shown], { timeout: PATIENCE_MS });
}

async function main() {
  let server = await test.startServer();
  const base = server.base;
  step(`server at ${base}`);

  const adaContext = await test.launch({ viewport: { width: 1280, height: 900 } });
  const bobContext = await test.launch({ viewport: { width: 1280, height: 900 } });
  const watchContext = await test.launch({ viewport: { width: 390, height: 844 } });

  step('ada opens a private room; her name is asked once');
  const ada = await adaContext.newPage();
  const adaWire = wire(ada, base);
  await adaWire.ready;
  await ada.goto(`${base}/race/three-blind-mice?private`);
  await ada.fill('#player-name', 'ada');
  await ada.screenshot({ path: path.join(screenshots, 'race-name-1280.png') });
  await ada.click('#name-form button');
  await ada.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  const code = ada.url().split('/').pop();
  await ada.waitForSelector('#my-seat-line[data-seat="0"]');
  step(`room ${code}`);

  step('bob takes a seat from the link; a third page watches');
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
  await ada.screenshot({ path: path.join(screenshots, 'race-lobby-1280.png'), fullPage: true });
  await watcher.screenshot({ path: path.join(screenshots, 'race-lobby-watching-390.png'), fullPage: true });

  step('the owner starts early; the race runs');
  await ada.click('#start-early');
  for (const page of [ada, bob]) await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await watcher.waitForSelector('#phase[data-phase="racing"]', { timeout: PATIENCE_MS });
  step('the race\'s clock ticks on every page between the server\'s messages');
  for (const [page, selector] of [[ada, '#my-clock'], [bob, '#my-clock'], [watcher, '#race-clock'], [watcher, clockOf(1)]]) {
    await clockPasses(page, selector, await page.textContent(selector));
  }
  assert.ok(await dragAMove(ada), 'ada has a move');
  assert.ok(await dragAMove(bob), 'bob has a move');
  await ada.screenshot({ path: path.join(screenshots, 'race-racing-1280.png'), fullPage: true });
  await watcher.screenshot({ path: path.join(screenshots, 'race-racing-watching-390.png'), fullPage: true });

  step('bob\'s socket is cut: the seat comes back with no click');
  await bobWire.cut();
  await bob.waitForFunction(() => document.querySelector('#race-message')?.textContent === 'Back in your seat.', null, { timeout: PATIENCE_MS });
  await bob.waitForSelector('#my-board .board.play');
  await dragAMove(bob);

  step('the server restarts with SIGTERM mid-race: both seats come back');
  await server.stop();
  for (const page of [ada, bob]) {
    await page.waitForFunction(() => /Reconnecting/.test(document.querySelector('#connection').textContent), null, { timeout: PATIENCE_MS });
  }
  await ada.screenshot({ path: path.join(screenshots, 'race-reconnecting-1280.png'), fullPage: true });
  server = await test.startServer({ listen: server.address });
  for (const page of [ada, bob]) {
    await page.waitForFunction(() => document.querySelector('#race-message')?.textContent === 'Back in your seat.'
      && document.querySelector('#connection').dataset.state === 'open', null, { timeout: PATIENCE_MS });
    await page.waitForSelector('#my-board .board.play');
  }
  await dragAMove(ada);

  step('ada resigns: her clock stops while bob\'s runs on');
  await ada.click('#resign');
  await watcher.waitForSelector('#racers [data-seat="0"] .status-resigned', { timeout: PATIENCE_MS });
  await ada.waitForSelector('#racers [data-seat="0"] .status-resigned', { timeout: PATIENCE_MS });
  const adaStopped = await watcher.textContent(clockOf(0));
  const adaOwnStopped = await ada.textContent('#my-clock');
  await clockPasses(watcher, clockOf(1), adaStopped);
  await clockPasses(bob, '#my-clock', adaStopped);
  await clockPasses(watcher, '#race-clock', adaStopped);
  assert.equal(await watcher.$eval('#phase', (phase) => phase.dataset.phase), 'racing', 'the race still runs');
  assert.equal(await watcher.textContent(clockOf(0)), adaStopped, 'ada\'s time stands still once she resigned');
  assert.equal(await ada.textContent('#my-clock'), adaOwnStopped, 'ada\'s own clock stands still');
  assert.equal(await ada.textContent(clockOf(0)), adaOwnStopped, 'ada\'s row shows her own clock\'s time');

  step('bob resigns: the results and the replay');
  await bob.click('#resign');
  for (const page of [ada, bob, watcher]) {
    await page.waitForSelector('#results', { timeout: PATIENCE_MS });
    await page.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  }
  const standings = await watcher.$$eval('#standings tbody tr', (rows) => rows.map((row) => row.querySelector('.name').textContent));
  assert.deepEqual([...standings].sort(), ['ada', 'bob']);
  // One's own row is marked, and the order is explained on the page.
  const own = await ada.$$eval('#standings tbody tr.own', (rows) => rows.map((row) => row.querySelector('.name').textContent));
  assert.deepEqual(own, ['▶ ada (you)']);
  assert.match(await ada.textContent('#standings-order'), /winners by time, then most cards in suit order/);
  // Three Blind Mice has no stock: no racer's counts name one.
  assert.equal(await ada.$$eval('[data-count="stock_turned"]', (counts) => counts.length), 0);
  await ada.screenshot({ path: path.join(screenshots, 'race-results-1280.png'), fullPage: true });
  await watcher.screenshot({ path: path.join(screenshots, 'race-results-390.png'), fullPage: true });

  step('ada registers in the page and is still signed in after a reload');
  const account = await adaContext.newPage();
  await account.goto(`${base}/account`);
  assert.equal(await account.inputValue('#register-name'), 'ada', 'the name asked once is offered');
  await account.click('#register-form button');
  await account.waitForSelector('#signed-in-as');
  await account.reload();
  await account.waitForSelector('#signed-in-as');
  assert.equal(await account.textContent('#signed-in-as strong'), 'ada');
  await account.waitForSelector('#record h2');
  assert.ok(!account.url().includes('token'), 'no token in the address');
  await account.screenshot({ path: path.join(screenshots, 'account-1280.png'), fullPage: true });

  step('ada reads the daily\'s terms: no card and no clock until she starts');
  const daily = await adaContext.newPage();
  const dailyWire = wire(daily, base);
  await dailyWire.ready;
  await daily.goto(`${base}/daily/three-blind-mice`);
  await daily.waitForSelector('#daily-start');
  await daily.waitForFunction(() => document.querySelector('#daily-standings [data-count="playing"]')?.textContent === '0', null, { timeout: PATIENCE_MS });
  assert.equal(await daily.$('#my-board .board'), null, 'no board before the start');
  assert.ok(!dailyWire.frames.some((frame) => frame.type === 'daily_started'), 'no attempt before the start');
  await daily.screenshot({ path: path.join(screenshots, 'daily-terms-1280.png'), fullPage: true });

  step('ada starts, and plays the daily deal with the day\'s standings live beside it');
  await daily.click('#daily-start');
  await daily.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await daily.waitForFunction(() => document.querySelector('#daily-standings [data-count="playing"]')?.textContent === '1', null, { timeout: PATIENCE_MS });
  assert.ok(await dragAMove(daily), 'the daily deal has a move');
  await daily.screenshot({ path: path.join(screenshots, 'daily-1280.png'), fullPage: true });
  await daily.click('#resign');
  await daily.waitForSelector('#daily-result[data-status="resigned"]', { timeout: PATIENCE_MS });
  await daily.waitForFunction(() => document.querySelector('#daily-standings [data-count="unranked"]')?.textContent === '1', null, { timeout: PATIENCE_MS });
  await daily.reload();
  await daily.waitForSelector('#daily-closed');

  checkFairPlay(adaWire.frames, 0, 'ada');
  checkFairPlay(bobWire.frames, 1, 'bob');
  checkFairPlay(watchWire.frames, null, 'the watcher');
  step(`screenshots in ${screenshots}`);
}

await test.run(main);
