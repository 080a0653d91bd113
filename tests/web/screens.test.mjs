// A quick race and the screens at both sizes, in a real browser: a real
// patience-server (the built binary, loopback, quick races of two seats)
// and headless Chromium. Two browser contexts, one 1280 wide and one 390
// wide, ask for a quick race of the same game, meet in one room and race
// (a move each by mouse drag and drop, then both resign, and both see the
// results and the replay); a third context, 390 wide, registers and plays
// the daily deal. Screenshots of the racer's own board, the daily and the
// account page, today's leaderboards and the past days at both sizes go
// to target/web-screenshots/, and the 1280 board of the race in progress
// too (to docs/screenshot.png, the README's picture, with
// UPDATE_README_SCREENSHOT=1). A dark colour scheme and reduced motion
// each take effect (computed styles). Every frame each racer received
// passes the fair-play check. No console error.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a message, a process); none on time.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';

import { checkFairPlay, dragAMove, PATIENCE_MS, root, screenshots, setUp, step, wire } from './harness.mjs';

const readmeScreenshot = process.env.UPDATE_README_SCREENSHOT
  ? path.join(root, 'docs', 'screenshot.png')
  : path.join(screenshots, 'race-board-1280.png');
const README_SCREENSHOT_BUDGET = 150 * 1024;

const test = setUp('screens');

async function seatOf(page) {
  await page.waitForSelector('#my-seat-line[data-seat]', { timeout: PATIENCE_MS });
  return Number(await page.getAttribute('#my-seat-line', 'data-seat'));
}

async function main() {
  // Quick races of two seats, so that two pages fill a room.
  const { base } = await test.startServer({ config: 'quick_race_seats = 2\n' });
  step(`server at ${base}`);

  const desktop = await test.launch({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', reducedMotion: 'no-preference' });
  const phone = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  step('two pages ask for a quick race of the same game and meet');
  const ada = await desktop.newPage();
  const adaWire = wire(ada, base);
  await adaWire.ready;
  const bob = await phone.newPage();
  const bobWire = wire(bob, base);
  await bobWire.ready;
  for (const [page, name] of [[ada, 'ada'], [bob, 'bob']]) {
    await page.goto(`${base}/race/three-blind-mice`);
    await page.fill('#player-name', name);
    await page.click('#name-form button');
    await page.waitForURL(/\/room\/[34679ACDEFGHJKMNPQRTWXY]{6}$/);
  }
  assert.equal(ada.url().split('/').pop(), bob.url().split('/').pop(), 'both quick races are the same room');
  const seats = [await seatOf(ada), await seatOf(bob)];
  assert.deepEqual([...seats].sort(), [0, 1]);
  step(`room ${ada.url().split('/').pop()}, seats ${seats.join(' and ')}`);

  step('the full room counts down and races; a move each by drag and drop');
  for (const page of [ada, bob]) await page.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  assert.ok(await dragAMove(ada), 'ada has a move');
  assert.ok(await dragAMove(bob), 'bob has a move');
  for (const page of [ada, bob]) {
    await page.waitForFunction(() => [...document.querySelectorAll('#racers [data-seat]')].length === 2, null, { timeout: PATIENCE_MS });
  }
  await ada.screenshot({ path: path.join(screenshots, 'race-my-board-1280.png'), fullPage: true });
  await bob.screenshot({ path: path.join(screenshots, 'race-my-board-390.png'), fullPage: true });
  const { scrollWidth, innerWidth } = await bob.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  assert.ok(scrollWidth <= innerWidth, `the race page is ${scrollWidth}px wide in a ${innerWidth}px window`);
  // The README's picture: the board area of the race in progress.
  const area = await ada.locator('main').boundingBox();
  const board = await ada.locator('#my-board').boundingBox();
  await ada.screenshot({
    path: readmeScreenshot,
    fullPage: true,
    clip: { x: area.x, y: area.y, width: area.width, height: board.y + board.height + 8 - area.y },
  });
  const pictureBytes = statSync(readmeScreenshot).size;
  console.log(`   ${path.relative(root, readmeScreenshot)}: ${pictureBytes} bytes`);
  assert.ok(pictureBytes <= README_SCREENSHOT_BUDGET, `${readmeScreenshot} is ${pictureBytes} bytes`);

  step('both resign: the results and the replay on both pages');
  for (const page of [ada, bob]) await page.click('#resign');
  for (const page of [ada, bob]) {
    await page.waitForSelector('#results', { timeout: PATIENCE_MS });
    await page.waitForSelector('#replay[data-steps]', { timeout: PATIENCE_MS });
  }
  const standings = await bob.$$eval('#standings tbody tr', (rows) => rows.map((row) => row.querySelector('.name').textContent));
  // Bob's own row is marked on his page.
  assert.deepEqual([...standings].sort(), ['ada', '▶ bob (you)']);
  await bob.screenshot({ path: path.join(screenshots, 'race-quick-results-390.png'), fullPage: true });
  checkFairPlay(adaWire.frames, seats[0], 'ada');
  checkFairPlay(bobWire.frames, seats[1], 'bob');

  step('at 390 wide: the account page and the daily with its standings');
  const carol = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const account = await carol.newPage();
  await account.goto(`${base}/account`);
  await account.fill('#register-name', 'carol');
  await account.click('#register-form button');
  await account.waitForSelector('#signed-in-as');
  await account.waitForSelector('#record h2');
  await account.screenshot({ path: path.join(screenshots, 'account-390.png'), fullPage: true });
  const daily = await carol.newPage();
  await daily.goto(`${base}/daily/three-blind-mice`);
  await daily.click('#daily-start');
  await daily.waitForSelector('#my-board .board.play', { timeout: PATIENCE_MS });
  await daily.waitForFunction(() => document.querySelector('#daily-standings [data-count="playing"]')?.textContent === '1', null, { timeout: PATIENCE_MS });
  await daily.screenshot({ path: path.join(screenshots, 'daily-390.png'), fullPage: true });
  const dailyWidth = await daily.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(dailyWidth <= 390, `the daily page is ${dailyWidth}px wide in a 390px window`);

  step('a dark colour scheme and reduced motion take effect');
  const light = await desktop.newPage();
  await light.goto(`${base}/practice/three-blind-mice?seed=11`);
  await light.waitForSelector('#play-area .board.play .card.face');
  const lightStyle = await light.evaluate(() => ({
    background: getComputedStyle(document.documentElement).backgroundColor,
    transition: getComputedStyle(document.querySelector('#play-area .board.play .card.face')).transitionDuration,
  }));
  const dark = await test.launch({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark', reducedMotion: 'reduce' });
  const darkPage = await dark.newPage();
  await darkPage.goto(`${base}/practice/three-blind-mice?seed=11`);
  await darkPage.waitForSelector('#play-area .board.play .card.face');
  const darkStyle = await darkPage.evaluate(() => ({
    background: getComputedStyle(document.documentElement).backgroundColor,
    transition: getComputedStyle(document.querySelector('#play-area .board.play .card.face')).transitionDuration,
  }));
  console.log(`   light: ${JSON.stringify(lightStyle)}; dark, reduced motion: ${JSON.stringify(darkStyle)}`);
  assert.equal(lightStyle.background, 'rgb(238, 241, 236)');
  assert.equal(darkStyle.background, 'rgb(21, 22, 23)');
  assert.equal(lightStyle.transition, '0.12s');
  assert.equal(darkStyle.transition, '0s');
  await darkPage.screenshot({ path: path.join(screenshots, 'practice-dark-1280.png'), fullPage: true });

  step('today\'s leaderboards and the past days at 1280 and 390 wide');
  for (const [context, width] of [[desktop, 1280], [phone, 390]]) {
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('#lb-three-blind-mice [data-count="unranked"]');
    await page.screenshot({ path: path.join(screenshots, `leaderboard-${width}.png`), fullPage: true });
    await page.goto(`${base}/days/three-blind-mice`);
    await page.waitForFunction(() => {
      const list = document.querySelector('#days');
      return list && (list.querySelector('.day, .error') || /No closed day/.test(list.textContent));
    });
    assert.equal(await page.locator('#days .error').count(), 0, await page.textContent('#days'));
    await page.screenshot({ path: path.join(screenshots, `days-${width}.png`), fullPage: true });
    await page.close();
  }

  step(`screenshots in ${screenshots}`);
}

await test.run(main);
