// The lobby and a series, in a real browser: a real patience-server (the
// built binary, loopback) and headless Chromium. One page opens a public
// best-of-three room from the lobby; another sees it in `/lobby` with its
// game, seats, player and series, and takes its seat with one click on
// Join (its name asked once). The two race; one resigns first, so the
// other takes the point, and the results show the series' score. Both
// press Rematch: both pages go to the new room, on a new deal, where the
// race panel shows the score (the lobby does not list it: a rematch's
// room is private). The next race is played the same way, and its
// results say who won the series. Every frame each racer's page received
// passes the fair-play check. No console error.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';

import { checkFairPlay, PATIENCE_MS, screenshots, setUp, step, wire } from './harness.mjs';

const test = setUp('lobby');

const ROOM_URL = /\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/;

async function seatOf(page) {
  await page.waitForSelector('#my-seat-line[data-seat]', { timeout: PATIENCE_MS });
  return Number(await page.getAttribute('#my-seat-line', 'data-seat'));
}

// The lobby's row of room `code` on `page`, once it is listed, as text
// by column.
async function lobbyRow(page, code) {
  const row = `#lobby-table tr[data-code="${code}"]`;
  await page.waitForSelector(row, { timeout: PATIENCE_MS });
  return page.$$eval(`${row} td`, (cells) => cells.map((cell) => cell.textContent));
}

// Both racers resign, `first` first, so that the other, lasting longer at
// equal cards, takes the race's point; every page shows the results.
async function resignBoth(first, second) {
  await first.click('#resign');
  await second.waitForSelector('#racers .status-resigned', { timeout: PATIENCE_MS });
  await second.click('#resign');
  for (const page of [first, second]) await page.waitForSelector('#results-series', { timeout: PATIENCE_MS });
}

async function main() {
  const { base } = await test.startServer();
  step(`server at ${base}`);
  const adaContext = await test.launch({ viewport: { width: 1280, height: 900 } });
  const bobContext = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const carolContext = await test.launch({ viewport: { width: 1280, height: 900 } });

  step('ada opens a public best-of-three room from the lobby');
  const ada = await adaContext.newPage();
  const adaWire = wire(ada, base);
  await adaWire.ready;
  await ada.goto(`${base}/lobby`);
  await ada.waitForSelector('#lobby-empty', { timeout: PATIENCE_MS });
  await ada.click('[data-open-series="three-blind-mice"]');
  await ada.fill('#player-name', 'ada');
  await ada.click('#name-form button');
  await ada.waitForURL(ROOM_URL);
  const code = ada.url().split('/').pop();
  assert.equal(await seatOf(ada), 0);
  await ada.waitForSelector('#series');
  assert.equal(await ada.textContent('#series'), 'Series: best of 3');
  step(`room ${code}`);

  step('bob sees it in the lobby with its game, seats, player and series, and joins in one click');
  const bob = await bobContext.newPage();
  const bobWire = wire(bob, base);
  await bobWire.ready;
  await bob.goto(`${base}/lobby`);
  const listed = await lobbyRow(bob, code);
  assert.deepEqual(listed.slice(0, 4), [code, 'Three Blind Mice', '1/2', 'ada']);
  assert.equal(listed[4], 'best of 3');
  await bob.screenshot({ path: path.join(screenshots, 'lobby-390.png'), fullPage: true });
  await bob.click(`#join-${code}`);
  await bob.fill('#player-name', 'bob');
  await bob.click('#name-form button');
  assert.equal(await seatOf(bob), 1);
  assert.equal(bob.url().split('/').pop(), code);

  step('the full room counts down and races; bob resigns first, so ada takes the point');
  for (const page of [ada, bob]) await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await resignBoth(bob, ada);
  for (const page of [ada, bob]) {
    assert.equal(await page.textContent('#results-series'), 'Series: ada 1 - bob 0 (best of 3)');
    assert.equal(await page.$eval('#standings tbody tr', (row) => row.dataset.seat), '0', 'ada ranks first');
  }
  const firstCommitment = await ada.textContent('#commitment');
  await ada.screenshot({ path: path.join(screenshots, 'series-results-1-1280.png'), fullPage: true });

  step('both press Rematch: both pages go to the new room');
  await ada.click('#rematch');
  await bob.waitForSelector('#rematch-status[data-status="open"]', { timeout: PATIENCE_MS });
  assert.match(await bob.textContent('#rematch-status'), /ada accepted; waiting for bob/);
  await bob.click('#rematch');
  for (const page of [ada, bob]) {
    await page.waitForURL((url) => ROOM_URL.test(url.pathname) && !url.pathname.endsWith(code), { timeout: PATIENCE_MS });
  }
  const next = ada.url().split('/').pop();
  assert.equal(bob.url().split('/').pop(), next, 'both are in the same new room');
  assert.equal(await seatOf(ada), 0);
  assert.equal(await seatOf(bob), 1);
  step(`the rematch's room ${next}`);

  step('the series\' score in the race panel; the lobby does not list a rematch\'s room');
  for (const page of [ada, bob]) {
    await page.waitForFunction(() => document.querySelector('#series')?.textContent === 'Series: ada 1 - bob 0 (best of 3)', null, { timeout: PATIENCE_MS });
  }
  // A rematch's room is private (its seats are its racers'): the lobby
  // does not list it.
  const carol = await carolContext.newPage();
  await carol.goto(`${base}/lobby`);
  await carol.waitForSelector('#lobby-empty', { timeout: PATIENCE_MS });

  step('the next race, on a new deal: bob resigns first again, and ada wins the series');
  for (const page of [ada, bob]) await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await ada.screenshot({ path: path.join(screenshots, 'series-racing-1280.png'), fullPage: true });
  await resignBoth(bob, ada);
  for (const page of [ada, bob]) {
    assert.equal(await page.textContent('#results-series'), 'Series: ada 2 - bob 0 (best of 3): ada wins the series');
  }
  assert.notEqual(await ada.textContent('#commitment'), firstCommitment, 'a new deal');
  await bob.screenshot({ path: path.join(screenshots, 'series-results-2-390.png'), fullPage: true });

  checkFairPlay(adaWire.frames, 0, 'ada');
  checkFairPlay(bobWire.frames, 1, 'bob');
  step(`screenshots in ${screenshots}`);
}

await test.run(main);
