// Practice in a real browser, on the rules engine compiled to WebAssembly:
// a real patience-server (the built binary, loopback, port 0) serves the
// page, and headless Chromium plays. Every game is won by clicks alone,
// following the page's hints; Three Blind Mice is won again by keyboard
// alone, and once at phone size with touch emulation, by taps and touch
// drags; an illegal drop (by mouse drag) says the engine's reason. Also
// prints the page's size (every file, wasm included, gzipped) and the
// time to the first board drawn. No console error is allowed.
//
// Run: `npm ci && npm test` here, after `cargo build --workspace`.
// Every wait is on a condition (DOM, a process); none on time.

import assert from 'node:assert/strict';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import { PATIENCE_MS, screenshots, setUp, step } from './harness.mjs';

const SEEDS = { 'three-blind-mice': 11, indian: 1000, midshipman: 1000, 'virginia-reel': 1000 };

// Every file the page loads, for the size budget.
const PAGE_FILES = ['/', '/style.css', '/app.js', '/cards.js', '/protocol.js', '/practice.js', '/engine.js',
  '/hint-worker.js', '/race.js', '/engine.wasm', '/favicon.svg', '/vendor/msgpack-3.1.3.min.js'];
const SIZE_BUDGET = 600 * 1024;

const test = setUp('practice');

async function shownHint(page) {
  await page.waitForFunction(() => {
    const message = document.querySelector('#message');
    return message && (message.dataset.kind === 'hint' || message.dataset.kind === 'error' || !document.querySelector('#won').hidden);
  }, null, { timeout: PATIENCE_MS });
  const kind = await page.getAttribute('#message', 'data-kind');
  if (!(await page.locator('#won').isHidden())) return null;
  assert.equal(kind, 'hint', await page.textContent('#message'));
  return page.evaluate(() => {
    const from = [...document.querySelectorAll('.hint-from')];
    const deepest = from.reduce((best, card) => (Number(card.dataset.depth) > Number(best?.dataset.depth ?? -1) ? card : best), null);
    const to = document.querySelector('.zone.hint-to');
    const targets = to ? [...to.querySelectorAll('[tabindex]')] : [];
    const describe = (element) => element && {
      kind: element.dataset.zoneKind, index: element.dataset.zoneIndex ?? null, depth: element.dataset.depth ?? null,
    };
    return { from: describe(deepest), to: describe(targets[targets.length - 1] ?? null), text: document.querySelector('#message').textContent };
  });
}

// Where to click a card: its top strip, which shows even when cards lie
// on it.
const TOP_STRIP = { position: { x: 8, y: 5 } };

// A selector for the element of a board at `spot`.
function at(spot) {
  let selector = `#play-area [data-zone-kind="${spot.kind}"][tabindex]`;
  if (spot.index !== null) selector += `[data-zone-index="${spot.index}"]`;
  if (spot.depth !== null) selector += `[data-depth="${spot.depth}"]`;
  return selector;
}

// Asks for a hint with `askHint`, plays it with `playMove`, until the won
// screen shows; returns the moves it took.
async function followHints(page, askHint, playMove) {
  for (let played = 0; played < 2000; played += 1) {
    const movesBefore = await page.getAttribute('#play-area .board', 'data-moves');
    await askHint();
    const hint = await shownHint(page);
    if (!hint) return played;
    await playMove(hint);
    await page.waitForFunction((before) => document.querySelector('#play-area .board')?.dataset.moves !== before
      || !document.querySelector('#won').hidden, movesBefore, { timeout: PATIENCE_MS });
    if (!(await page.locator('#won').isHidden())) return played + 1;
  }
  throw new Error('no win within 2000 hints');
}

async function openPractice(context, base, slug, seed) {
  const page = await context.newPage();
  await page.goto(`${base}/practice/${slug}?seed=${seed}`);
  await page.waitForSelector(`#play-area[data-seed="${seed}"] .board.play`);
  return page;
}

async function wonLine(page) {
  await page.waitForSelector('#won:not([hidden])');
  return page.textContent('#won-line');
}

async function main() {
  const { base } = await test.startServer({ args: [] });
  step(`server at ${base}`);

  step('the page\'s size');
  let total = 0;
  for (const file of PAGE_FILES) {
    const response = await fetch(`${base}${file}`);
    assert.equal(response.status, 200, file);
    const body = Buffer.from(await response.arrayBuffer());
    const gzipped = gzipSync(body, { level: 9 }).length;
    total += gzipped;
    console.log(`   ${file}: ${body.length} bytes, ${gzipped} gzipped`);
  }
  console.log(`   page size: ${total} bytes gzipped (budget ${SIZE_BUDGET})`);
  assert.ok(total <= SIZE_BUDGET, `the page is ${total} bytes gzipped, over ${SIZE_BUDGET}`);

  const browser = await test.launch({ viewport: { width: 1280, height: 900 } });

  step('the chooser, and a proved deal found in the worker');
  const chooser = await browser.newPage();
  await chooser.goto(`${base}/practice`);
  await chooser.waitForSelector('[data-practice="three-blind-mice"]');
  await chooser.screenshot({ path: path.join(screenshots, 'practice-chooser-1280.png'), fullPage: true });
  await chooser.click('[data-practice="three-blind-mice"]');
  await chooser.waitForSelector('#play-area[data-seed] .board.play', { timeout: PATIENCE_MS });
  assert.match(await chooser.textContent('#deal-line'), /proved winnable/);
  assert.match(chooser.url(), /\/practice\/three-blind-mice\?seed=[0-9]+$/);
  const firstBoard = await chooser.evaluate(() => performance.getEntriesByName('first-board')[0]?.startTime);
  await chooser.close();

  step('first board drawn, a chosen seed');
  const timed = await browser.newPage();
  await timed.goto(`${base}/practice/three-blind-mice?seed=11`);
  await timed.waitForSelector('#play-area .board.play');
  const firstBoardMs = await timed.evaluate(() => performance.getEntriesByName('first-board')[0].startTime);
  console.log(`   first board drawn ${firstBoardMs.toFixed(0)} ms after navigation (a proved deal found in the worker: ${firstBoard?.toFixed(0)} ms)`);
  await timed.close();

  for (const [slug, seed] of Object.entries(SEEDS)) {
    step(`${slug} seed ${seed}, won by clicks following hints`);
    const page = await openPractice(browser, base, slug, seed);
    await page.screenshot({ path: path.join(screenshots, `practice-${slug}-1280.png`), fullPage: true });
    let shotHeld = slug !== 'indian';
    const moves = await followHints(page, () => page.click('#hint'), async (hint) => {
      await page.click(at(hint.from), TOP_STRIP);
      if (!hint.to) return;
      if (!shotHeld) {
        await page.waitForSelector('.zone.target');
        await page.screenshot({ path: path.join(screenshots, 'practice-held-1280.png'), fullPage: true });
        shotHeld = true;
      }
      await page.click(at(hint.to), TOP_STRIP);
    });
    const line = await wonLine(page);
    console.log(`   ${line}`);
    assert.match(line, new RegExp(`won in [0-9]+:[0-9]{2} with ${moves} moves`));
    await page.screenshot({ path: path.join(screenshots, `practice-${slug}-won-1280.png`), fullPage: true });
    await page.close();
  }

  step('undo, and an illegal drop by mouse drag says the engine\'s reason');
  {
    const page = await openPractice(browser, base, 'indian', 1000);
    const faces = await page.$$eval('#play-area .zone.pile [data-depth="0"]', (cards) => cards.map((card) => card.dataset.zoneIndex));
    // Drag pile 1's top card onto every other pile until one refuses.
    let refused = false;
    for (const other of faces.slice(1)) {
      const from = await page.locator(at({ kind: 'pile', index: faces[0], depth: 0 })).boundingBox();
      const to = await page.locator(at({ kind: 'pile', index: other, depth: 0 })).boundingBox();
      await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await page.mouse.down();
      await page.mouse.move(from.x + from.width / 2 + 20, from.y + from.height / 2 + 20, { steps: 3 });
      await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 5 });
      await page.mouse.up();
      // The drop's own outcome: a move, or the engine's reason (the message
      // says "… picked" while the card is held, before the drop is judged).
      await page.waitForFunction(() => /^Not there: /.test(document.querySelector('#message').textContent)
        || document.querySelector('.board').dataset.moves !== '0');
      if ((await page.getAttribute('#play-area .board', 'data-moves')) === '0') {
        assert.match(await page.textContent('#message'), /^Not there: /);
        refused = true;
        break;
      }
      await page.click('#undo');
      await page.waitForSelector('#play-area .board[data-moves="0"]');
    }
    assert.ok(refused, 'some drop was refused');
    await page.close();
  }

  step('three-blind-mice by keyboard alone');
  {
    const page = await openPractice(browser, base, 'three-blind-mice', SEEDS['three-blind-mice']);
    // Moves the focus to `spot` with the terminal's keys: a digit to the
    // pile (or the arrows along the top row), then up the pile.
    const focusSpot = async (spot) => {
      if (spot.kind === 'pile') {
        await page.keyboard.press(String((Number(spot.index) + 1) % 10));
      } else {
        await page.keyboard.press('1');
        const order = await page.$$eval('#play-area [data-zone-kind][tabindex]', (elements) => elements
          .filter((element) => element.dataset.depth === undefined || element.dataset.depth === '0')
          .map((element) => `${element.dataset.zoneKind}-${element.dataset.zoneIndex ?? ''}`));
        const from = order.indexOf('pile-0');
        const to = order.indexOf(`${spot.kind}-${spot.index ?? ''}`);
        for (let left = 0; left < (from - to + order.length) % order.length; left += 1) await page.keyboard.press('ArrowLeft');
      }
      for (let up = 0; up < Number(spot.depth ?? 0); up += 1) await page.keyboard.press('ArrowUp');
      const focused = await page.evaluate(() => {
        const element = document.activeElement;
        return { kind: element.dataset.zoneKind, index: element.dataset.zoneIndex ?? null, depth: element.dataset.depth ?? null };
      });
      assert.deepEqual({ kind: focused.kind, index: focused.index }, { kind: spot.kind, index: spot.index });
    };
    await page.focus('#play-area [tabindex]');
    const moves = await followHints(page, () => page.keyboard.press('h'), async (hint) => {
      await focusSpot(hint.from);
      await page.keyboard.press('Enter');
      if (!hint.to) return;
      await focusSpot(hint.to);
      await page.keyboard.press('Enter');
    });
    console.log(`   ${await wonLine(page)} (${moves} hints)`);
    await page.close();
  }

  step('three-blind-mice at 390x844 by taps and touch drags');
  {
    const context = await test.launch({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await page.goto(`${base}/practice/three-blind-mice?seed=${SEEDS['three-blind-mice']}`);
    await page.waitForSelector('#play-area .board.play');
    await page.screenshot({ path: path.join(screenshots, 'practice-three-blind-mice-390.png'), fullPage: true });
    const client = await context.newCDPSession(page);
    const center = async (selector) => {
      await page.locator(selector).scrollIntoViewIfNeeded();
      const box = await page.locator(selector).boundingBox();
      return { x: box.x + Math.min(box.width / 2, 8), y: box.y + 5 };
    };
    // A finger's drag, with its own event times (50 ms apart): it rests on
    // the target before lifting, as a person's does, so that Chromium
    // sees no fling (a tap that stops a fling makes no click).
    const touchDrag = async (from, to) => {
      const start = await center(from);
      const end = await center(to);
      let time = Date.now() / 1000;
      const touch = (type, touchPoints) => {
        time += 0.05;
        return client.send('Input.dispatchTouchEvent', { type, touchPoints, timestamp: time });
      };
      await touch('touchStart', [start]);
      for (let part = 1; part <= 6; part += 1) {
        await touch('touchMove', [{ x: start.x + ((end.x - start.x) * part) / 6, y: start.y + ((end.y - start.y) * part) / 6 }]);
      }
      for (let rest = 0; rest < 3; rest += 1) await touch('touchMove', [end]);
      await touch('touchEnd', []);
    };
    let dragged = 0;
    const moves = await followHints(page, () => page.tap('#hint'), async (hint) => {
      // Taps and drags by turns.
      if (hint.to && dragged % 2 === 0) {
        await touchDrag(at(hint.from), at(hint.to));
      } else {
        await page.tap(at(hint.from), TOP_STRIP);
        if (hint.to) await page.tap(at(hint.to), TOP_STRIP);
      }
      dragged += 1;
    });
    console.log(`   ${await wonLine(page)} (${moves} hints)`);
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
    assert.ok(scrollWidth <= innerWidth, `the practice page is ${scrollWidth}px wide in a ${innerWidth}px window`);
    await page.screenshot({ path: path.join(screenshots, 'practice-three-blind-mice-won-390.png'), fullPage: true });
    for (const slug of ['indian', 'virginia-reel']) {
      await page.goto(`${base}/practice/${slug}?seed=${SEEDS[slug]}`);
      await page.waitForSelector('#play-area .board.play');
      await page.screenshot({ path: path.join(screenshots, `practice-${slug}-390.png`), fullPage: true });
    }
    await page.goto(`${base}/practice`);
    await page.waitForSelector('[data-practice]');
    await page.screenshot({ path: path.join(screenshots, 'practice-chooser-390.png'), fullPage: true });
    await page.close();
  }

  step(`screenshots in ${screenshots}`);
}

await test.run(main);
