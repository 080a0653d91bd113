// A quick race's wait in the page, in a real browser: a real
// patience-server (the built binary, loopback, a bot offered after 1.5 s
// instead of 90 s) and headless Chromium. The player asks for a quick
// race, the waiting view shows the wait, the rating window and how many
// players wait and race; nobody comes, a bot is offered, the player keeps
// waiting (the offer goes, the wait goes on), the bot is offered again and
// the player races it: the page goes to the bot's room, the bot marked,
// and the player resigns to the results.
// Every frame the page received passes the fair-play check. No console
// error.
//
// Needs a server with `quick_race_wait` and `quick_race_answer`
// (docs/PROTOCOL.md).
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';

import { checkFairPlay, PATIENCE_MS, screenshots, setUp, step, wire } from './harness.mjs';

const test = setUp('quick');

async function main() {
  const { base } = await test.startServer({ args: ['--countdown-ms', '1000', '--quick-race-bot-offer-ms', '1500'] });
  step(`server at ${base}`);
  const context = await test.launch({ viewport: { width: 390, height: 844 } });

  step('a quick race: the waiting view shows the wait, the window and the counts');
  const page = await context.newPage();
  const pageWire = wire(page, base);
  await pageWire.ready;
  await page.goto(`${base}/race/three-blind-mice`);
  await page.fill('#player-name', 'ada');
  await page.click('#name-form button');
  await page.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  const waitingRoom = page.url();
  await page.waitForSelector('#quick-wait', { timeout: PATIENCE_MS });
  assert.match(await page.textContent('#quick-wait'), /rivals within 4 rating points/);
  assert.equal(await page.textContent('#quick-counts'), '1 waiting, 0 racing Three Blind Mice.');

  step('no rival: a bot is offered; keep waiting withdraws the offer only');
  await page.waitForSelector('#bot-offer', { timeout: PATIENCE_MS });
  await page.screenshot({ path: path.join(screenshots, 'quick-bot-offer-390.png'), fullPage: true });
  await page.click('#keep-waiting');
  await page.waitForSelector('#bot-offer', { state: 'detached', timeout: PATIENCE_MS });
  await page.waitForSelector('#quick-wait');
  assert.equal(page.url(), waitingRoom, 'still in the waiting room');

  step('offered again: race the bot');
  await page.waitForSelector('#race-bot', { timeout: PATIENCE_MS });
  await page.click('#race-bot');
  await page.waitForURL((url) => url.href !== waitingRoom && /\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/.test(url.pathname), { timeout: PATIENCE_MS });
  await page.waitForSelector('#racers .bot-mark[data-bot="normal"]', { timeout: PATIENCE_MS });
  await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  assert.equal(await page.$('#quick-wait'), null, 'the wait is over');
  await page.screenshot({ path: path.join(screenshots, 'quick-bot-race-390.png'), fullPage: true });

  step('the player resigns; the results show the bot marked');
  await page.click('#resign');
  await page.waitForSelector('#results', { timeout: PATIENCE_MS });
  await page.waitForSelector('#standings .bot-mark[data-bot="normal"]');
  checkFairPlay(pageWire.frames, 0, 'the player');
}

await test.run(main);
