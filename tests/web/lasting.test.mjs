// A finished race's lasting page, in a real browser: a real patience-server
// (the built binary, loopback, a data directory, quick races of two seats,
// finished rooms kept 3 s) and headless Chromium. Two pages race and
// resign; the results link to `/race/ID`, whose page shows the same
// standings, the commitment the race started with (computed from the
// reveal) and the replay, with the cards that lay face down shown face up.
// Once the room has closed, its link points to the race's page, in a
// browser that never saw the race (the server names the room's race). A daily
// attempt's page stays shut while its day runs: the page is told
// `replay_not_yet` and gets no board and no seed. A bad path gets the
// site's own 404 page, whose link leads back home. The server's start
// message names the page's address. No console error.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';

import { PATIENCE_MS, screenshots, setUp, step, wire } from './harness.mjs';

// The 404 page is loaded on purpose; Chromium logs its status.
const test = setUp('lasting', { ignoredErrors: /status of 404/ });

async function seatOf(page) {
  await page.waitForSelector('#my-seat-line[data-seat]', { timeout: PATIENCE_MS });
  return Number(await page.getAttribute('#my-seat-line', 'data-seat'));
}

async function main() {
  const { address, base, printed } = await test.startServer({ config: 'quick_race_seats = 2\nfinished_room_linger_ms = 3000\n' });
  assert.equal(printed.at(-1), `the web page: http://${address}/`);
  step(`server at ${base}, its start message naming the page`);

  const desktop = await test.launch({ viewport: { width: 1280, height: 900 } });
  const phone = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  step('two pages race and resign; the results link to the race\'s page');
  const ada = await desktop.newPage();
  const adaWire = wire(ada, base);
  await adaWire.ready;
  const bob = await phone.newPage();
  for (const [page, name] of [[ada, 'ada'], [bob, 'bob']]) {
    await page.goto(`${base}/race/three-blind-mice`);
    await page.fill('#player-name', name);
    await page.click('#name-form button');
    await page.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  }
  const room = ada.url();
  const seats = [await seatOf(ada), await seatOf(bob)];
  assert.deepEqual([...seats].sort(), [0, 1]);
  for (const page of [ada, bob]) await page.waitForSelector('#resign', { timeout: PATIENCE_MS });
  for (const page of [ada, bob]) await page.click('#resign');
  for (const page of [ada, bob]) await page.waitForSelector('#race-link', { timeout: PATIENCE_MS });
  const link = await ada.getAttribute('#race-link', 'href');
  assert.match(link, /^\/race\/[1-9][0-9]*$/);
  assert.equal(await bob.getAttribute('#race-link', 'href'), link);
  const raceId = link.split('/').pop();
  const started = adaWire.frames.find((frame) => frame.type === 'race_started');
  assert.ok(started, 'ada saw the race start');
  // The room's own replay shows the deal's face-down cards face up.
  await ada.waitForSelector('#replay[data-steps] #replay-board .card.was-face-down', { timeout: PATIENCE_MS });

  step(`the race's page, ${link}: standings, reveal, commitment, replay`);
  await ada.click('#race-link');
  await ada.waitForURL(`${base}${link}`);
  await ada.waitForSelector('#results #standings tbody tr', { timeout: PATIENCE_MS });
  const names = await ada.$$eval('#standings tbody tr .name', (cells) => cells.map((cell) => cell.firstChild.textContent));
  assert.deepEqual([...names].sort(), ['ada', 'bob']);
  await ada.waitForFunction((commitment) => document.querySelector('#commitment')?.textContent === commitment,
    started.commitment, { timeout: PATIENCE_MS });
  await ada.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  const faceDown = await ada.locator('#replay-board .card.back').count();
  const revealed = await ada.locator('#replay-board .card.was-face-down').count();
  assert.equal(faceDown, 0, 'no card back in a finished race\'s replay');
  assert.ok(revealed > 0, 'the cards that lay face down show, marked');
  assert.equal(await ada.locator('#race-link').count(), 0, 'the race\'s page does not link to itself');
  await ada.screenshot({ path: path.join(screenshots, 'race-page-1280.png'), fullPage: true });
  const phonePage = await phone.newPage();
  await phonePage.goto(`${base}${link}`);
  await phonePage.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the race's page is ${width}px wide in a 390px window`);
  await phonePage.screenshot({ path: path.join(screenshots, 'race-page-390.png'), fullPage: true });

  step('once the room has closed, its link points to the race\'s page, in a browser that never saw it');
  const stranger = await test.launch({ viewport: { width: 1280, height: 900 } });
  const again = await stranger.newPage();
  let over = false;
  while (!over) {
    await again.goto(room);
    await again.waitForSelector('#room-header > *', { timeout: PATIENCE_MS });
    over = (await again.locator('#room-over').count()) > 0;
    if (!over) {
      // Still open: its finished race is on show until the room closes.
      await again.waitForSelector('#results', { timeout: PATIENCE_MS });
    }
  }
  assert.equal(await again.getAttribute('#room-over #race-link', 'href'), link);

  step('a daily attempt\'s page stays shut while its day runs');
  const carol = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const account = await carol.newPage();
  await account.goto(`${base}/account`);
  await account.fill('#register-name', 'carol');
  await account.click('#register-form button');
  await account.waitForSelector('#signed-in-as');
  const daily = await carol.newPage();
  await daily.goto(`${base}/daily/three-blind-mice`);
  // The attempt and its clock begin on Start.
  await daily.waitForSelector('#daily-start', { timeout: PATIENCE_MS });
  await daily.click('#daily-start');
  await daily.waitForSelector('#resign', { timeout: PATIENCE_MS });
  await daily.click('#resign');
  await daily.waitForSelector('#daily-result', { timeout: PATIENCE_MS });
  const dailyLink = await daily.getAttribute('#race-link', 'href');
  assert.match(dailyLink, /^\/race\/[1-9][0-9]*$/);
  for (const context of [carol, desktop]) {
    const visitor = await context.newPage();
    const visitorWire = wire(visitor, base);
    await visitorWire.ready;
    await visitor.goto(`${base}${dailyLink}`);
    await visitor.waitForSelector('[data-refused="replay_not_yet"]', { timeout: PATIENCE_MS });
    assert.equal(await visitor.locator('main .card').count(), 0, 'no card of an open day');
    const told = visitorWire.frames.map((frame) => frame.type);
    for (const secret of ['replay_data', 'boards_replay']) assert.ok(!told.includes(secret), `${secret} in ${told}`);
    const text = JSON.stringify(visitorWire.frames, (_, value) => (typeof value === 'bigint' ? String(value) : value));
    assert.ok(!/"seed"|"salt"/.test(text), `no seed or salt of an open day: ${text}`);
    await visitor.close();
  }

  step('a bad path: the site\'s own 404 page, and the way back');
  const lost = await desktop.newPage();
  const answer = await lost.goto(`${base}/no/such/page`);
  assert.equal(answer.status(), 404);
  assert.equal(await lost.textContent('h1'), 'No such page');
  const background = await lost.evaluate(() => getComputedStyle(document.querySelector('header.top')).backgroundColor);
  assert.equal(background, 'rgb(27, 94, 32)', 'the site\'s header, styled');
  await lost.screenshot({ path: path.join(screenshots, 'not-found-1280.png'), fullPage: true });
  await lost.click('#way-back');
  await lost.waitForURL(`${base}/`);
  await lost.waitForSelector('#leaderboards');

  step(`race ${raceId}'s page and the 404 page in ${screenshots}`);
}

await test.run(main);
