// Practice (`/practice`, `/practice/GAME`, `/practice/GAME?seed=N`): a
// deal played alone in the page, on the rules engine compiled to
// WebAssembly, with hints from the solver in a worker, undo, a clock, a
// new deal and a won screen. Nothing goes over the network.
//
// The game is the seed and the list of moves played (the engine keeps no
// game), so undo drops the last move and the board is the engine's
// answer for the list. `gestures` turns clicks, double-clicks, drags
// (mouse and touch) and the terminal's keys on a board into picks, drops
// and natural moves; it knows no rule, the engine says what each means.

import { GAMES, gameOf } from './protocol.js';
import { board, cardName, h, sameZone, zoneOf, zoneTitle } from './cards.js';

// The solver's budget for a hint or a proved deal, in positions: the
// terminal's practice budget.
const SOLVER_BUDGET = 200000;
// How many seeds a new deal tries for one the solver proves winnable.
const DEAL_SEEDS = 50;

function clock(ms) {
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

// What a move does, in words: "seven of hearts from pile 3 to pile 4".
export function describeMove(view, move) {
  if (!move.to) return move.from.kind === 'stock' ? 'the stock' : move.text;
  const zone = view.zones.find((entry) => sameZone(entry.zone, move.from));
  const code = zone ? zone.face_up[zone.face_up.length - 1 - move.depth] : null;
  const card = code ? cardName(code) : 'the card';
  return `${card} from ${zoneTitle(move.from)} to ${zoneTitle(move.to)}`;
}

// The held card and what lies above it: the elements to mark.
export function heldElements(container, held) {
  return [...container.querySelectorAll('[data-depth]')].filter((element) => {
    const zone = zoneOf(element);
    return sameZone(zone, held.from) && Number(element.dataset.depth) <= held.depth;
  });
}

// Where each place of a drawn board is, for marking targets.
export function zoneElement(container, zone) {
  return [...container.querySelectorAll('.zone[data-zone-kind]')].find((element) => sameZone(zoneOf(element), zone));
}

// Turns gestures on the board in `container` into calls:
// `pick(from, depth)`, `drop(zone)`, `natural(from, depth)`, `key(event)`.
// A click picks a card up or drops the held one; a double-click (or
// double-tap) plays its natural move; a drag (mouse or touch) picks it up
// and drops it where it is let go; Enter picks or drops the focused card,
// Space plays its natural move, as in the terminal.
export function gestures(container, handlers) {
  let drag = null;
  let suppressClick = false;

  const target = (event) => event.target.closest?.('[data-zone-kind][tabindex]');
  const place = (element) => ({ zone: zoneOf(element), depth: element.dataset.depth === undefined ? null : Number(element.dataset.depth) });

  container.addEventListener('click', (event) => {
    if (suppressClick) {
      suppressClick = false;
      return;
    }
    const element = target(event);
    if (element) handlers.activate(place(element));
  });
  container.addEventListener('dblclick', (event) => {
    const element = target(event);
    if (!element) return;
    const { zone, depth } = place(element);
    if (depth !== null) handlers.natural(zone, depth);
  });
  container.addEventListener('keydown', (event) => {
    const element = target(event);
    if (element && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      const spot = place(element);
      if (event.key === 'Enter') handlers.activate(spot);
      else if (spot.depth !== null) handlers.natural(spot.zone, spot.depth);
      return;
    }
    handlers.key(event, element ? place(element) : null);
  });

  container.addEventListener('pointerdown', (event) => {
    const element = target(event);
    if (!element || event.button !== 0 || element.dataset.depth === undefined) return;
    if (!element.classList.contains('face')) return;
    drag = { element, spot: place(element), x: event.clientX, y: event.clientY, ghost: null, pointer: event.pointerId };
  });
  container.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.pointer) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost) {
      if (Math.hypot(dx, dy) < 8) return;
      handlers.pick(drag.spot.zone, drag.spot.depth);
      // The held card and those on it follow the pointer.
      const moved = heldElements(container, { from: drag.spot.zone, depth: drag.spot.depth });
      const first = moved[0]?.getBoundingClientRect();
      if (!first) {
        drag = null;
        return;
      }
      const ghost = h('div', { class: 'drag-ghost', 'aria-hidden': 'true' });
      for (const card of moved) {
        const copy = card.cloneNode(true);
        copy.removeAttribute('tabindex');
        copy.removeAttribute('role');
        ghost.append(copy);
      }
      ghost.style.left = `${first.left}px`;
      ghost.style.top = `${first.top}px`;
      ghost.style.width = `${first.width}px`;
      document.body.append(ghost);
      drag.ghost = ghost;
      drag.left = first.left;
      drag.top = first.top;
    }
    drag.ghost.style.transform = `translate(${dx}px, ${dy}px)`;
    event.preventDefault();
  });
  const finish = (event) => {
    if (!drag || event.pointerId !== drag.pointer) return;
    const { ghost } = drag;
    drag = null;
    if (!ghost) return;
    ghost.remove();
    suppressClick = true;
    // The click that follows a drag, if any, comes at once; after that,
    // clicks count again.
    setTimeout(() => { suppressClick = false; }, 0);
    if (event.type === 'pointercancel') {
      handlers.cancel();
      return;
    }
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const zone = zoneOf(under);
    // After the touch's own end event, which a board drawn again at once
    // would take from it.
    setTimeout(() => (zone ? handlers.drop(zone) : handlers.cancel()), 0);
  };
  container.addEventListener('pointerup', finish);
  container.addEventListener('pointercancel', finish);
}

// The terminal's keys that move the focus: arrows between places and up
// and down a pile, digits to a pile, w, s or d, f to the waste, the stock,
// the foundations. Returns whether the key was one of them.
export function moveFocus(container, event, spot) {
  const focusables = [...container.querySelectorAll('[data-zone-kind][tabindex]')];
  const tops = focusables.filter((element) => element.dataset.depth === undefined || element.dataset.depth === '0');
  const focus = (element) => {
    if (!element) return false;
    element.focus();
    event.preventDefault();
    return true;
  };
  const key = event.key;
  if (/^[0-9]$/.test(key)) {
    const index = key === '0' ? 9 : Number(key) - 1;
    return focus(tops.find((element) => sameZone(zoneOf(element), { kind: 'pile', index })));
  }
  const jumps = { w: 'waste', s: 'stock', d: 'stock', f: 'foundation' };
  if (jumps[key]) return focus(tops.find((element) => zoneOf(element).kind === jumps[key]));
  if (!spot) return false;
  const current = tops.findIndex((element) => sameZone(zoneOf(element), spot.zone));
  if (key === 'ArrowRight' || key === 'ArrowLeft') {
    const step = key === 'ArrowRight' ? 1 : -1;
    return focus(tops[(current + step + tops.length) % tops.length]);
  }
  if ((key === 'ArrowUp' || key === 'ArrowDown') && spot.depth !== null) {
    const depth = spot.depth + (key === 'ArrowUp' ? 1 : -1);
    return focus(focusables.find((element) => sameZone(zoneOf(element), spot.zone) && Number(element.dataset.depth) === depth));
  }
  return false;
}

// The game chooser at `/practice`.
function chooser(main) {
  main.replaceChildren(
    h('h1', {}, 'Play'),
    h('p', { class: 'meta' }, 'Practice any game alone, on a deal the solver proved winnable or a seed you choose, with hints, undo and a clock (nothing is sent to the server); or race: a quick race with whoever is waiting, or a private room whose link you share.'),
    h('div', { class: 'grid' }, GAMES.map((game) => h('section', { class: 'panel' },
      h('h2', {}, game.title),
      h('p', { class: 'toolbar' },
        h('a', { class: 'button primary', href: `/practice/${game.slug}`, 'data-practice': game.slug }, 'Practice'),
        h('a', { class: 'button', href: `/race/${game.slug}`, 'data-quick-race': game.slug }, 'Quick race'),
        h('a', { class: 'button', href: `/race/${game.slug}?private`, 'data-private-room': game.slug }, 'Private room')),
      h('p', { class: 'toolbar' }, 'Race a bot: ', ['easy', 'normal', 'strong'].map((level) =>
        h('a', { class: 'button', href: `/race/${game.slug}?bot=${level}`, 'data-bot-race': `${game.slug}-${level}` }, level))),
      h('form', {
        class: 'seed-form',
        onsubmit: (event) => {
          event.preventDefault();
          const seed = new FormData(event.target).get('seed');
          if (/^[0-9]{1,15}$/.test(String(seed))) location.assign(`/practice/${game.slug}?seed=${seed}`);
        },
      },
      h('label', {}, 'Seed ', h('input', { name: 'seed', inputmode: 'numeric', pattern: '[0-9]{1,15}', required: true, size: 10 })),
      ' ', h('button', { type: 'submit' }, 'Deal'))))),
  );
}

// A random seed for a new deal: the page picks it (the engine takes
// seeds as arguments and draws none itself).
function randomSeed() {
  const words = new Uint32Array(1);
  crypto.getRandomValues(words);
  return words[0] % 1000000000;
}

// The practice screen for `slug`, on `engine` (main thread) and
// `thinker` (the solver's worker).
export function practiceScreen(main, { slug, seed }, engine, thinker) {
  if (!slug) {
    chooser(main);
    return;
  }
  const game = gameOf(slug);
  const state = { seed, moves: [], held: null, hint: null, startedAt: null, wonMs: null, current: null };
  const title = h('h1', {}, `Practice: ${game.title}`);
  const dealLine = h('p', { class: 'meta', id: 'deal-line' }, 'Dealing…');
  const clockText = h('span', { class: 'clock', id: 'clock', 'aria-label': 'time' }, '0:00');
  const movesText = h('span', { class: 'moves-count', id: 'moves-count' }, '0 moves');
  const hintButton = h('button', { type: 'button', id: 'hint', 'aria-keyshortcuts': 'h' }, 'Hint');
  const undoButton = h('button', { type: 'button', id: 'undo', 'aria-keyshortcuts': 'u' }, 'Undo');
  const newButton = h('button', { type: 'button', id: 'new-deal' }, 'New deal');
  const message = h('p', { class: 'message', id: 'message', role: 'status', 'aria-live': 'polite' });
  const area = h('div', { class: 'play-area', id: 'play-area' });
  const wonPanel = h('section', { class: 'panel won', id: 'won', hidden: true });
  main.replaceChildren(title, dealLine,
    h('div', { class: 'toolbar' }, hintButton, undoButton, newButton, clockText, ' · ', movesText),
    message, area, wonPanel);

  const position = () => ({ game: slug, seed: state.seed, moves: state.moves });
  const say = (text, kind = 'info') => {
    message.textContent = text;
    message.dataset.kind = kind;
  };

  function ask(request) {
    try {
      return engine.ask(request);
    } catch (error) {
      say(error.message, 'error');
      return null;
    }
  }

  function render() {
    const answer = ask({ op: 'state', position: position() });
    if (!answer) return;
    state.current = answer;
    const focused = document.activeElement && area.contains(document.activeElement)
      ? { zone: zoneOf(document.activeElement), depth: document.activeElement.dataset.depth }
      : null;
    const drawn = board(answer.view, true);
    drawn.dataset.moves = String(answer.moves.length);
    drawn.dataset.won = String(answer.won);
    area.replaceChildren(drawn);
    if (!performance.getEntriesByName('first-board').length) performance.mark('first-board');
    movesText.textContent = `${answer.moves.length} move${answer.moves.length === 1 ? '' : 's'}`;
    undoButton.disabled = !state.moves.length;
    mark();
    if (focused?.zone) {
      const again = [...area.querySelectorAll('[data-zone-kind][tabindex]')].find((element) =>
        sameZone(zoneOf(element), focused.zone) && element.dataset.depth === focused.depth)
        ?? [...area.querySelectorAll('[data-zone-kind][tabindex]')].find((element) => sameZone(zoneOf(element), focused.zone));
      again?.focus();
    }
    if (answer.won && state.wonMs === null) {
      state.wonMs = performance.now() - state.startedAt;
      showWon();
    } else if (!answer.won) {
      wonPanel.hidden = true;
      if (answer.stuck) say('No move is left: undo, or deal again.', 'error');
    }
  }

  // Marks the held card, the places it may go and the hinted move on the
  // board drawn, without drawing it again: a card being dragged keeps its
  // element (a touch whose element is removed never ends).
  function mark() {
    for (const name of ['held', 'target', 'hint-from', 'hint-to']) {
      for (const element of area.querySelectorAll(`.${name}`)) element.classList.remove(name);
    }
    if (state.held) {
      for (const element of heldElements(area, state.held)) element.classList.add('held');
      const lit = ask({ op: 'targets', position: position(), held: state.held }) ?? [];
      for (const zone of lit) zoneElement(area, zone)?.classList.add('target');
    }
    if (state.hint) {
      for (const element of heldElements(area, { from: state.hint.from, depth: state.hint.depth })) element.classList.add('hint-from');
      if (state.hint.to) zoneElement(area, state.hint.to)?.classList.add('hint-to');
    }
  }

  function showWon() {
    const moves = state.moves.length;
    wonPanel.replaceChildren(
      h('h2', {}, 'Won!'),
      h('p', { id: 'won-line' }, `${game.title}, seed ${state.seed}: won in ${clock(state.wonMs)} with ${moves} move${moves === 1 ? '' : 's'}.`),
      h('button', { type: 'button', class: 'primary', onclick: () => newDeal() }, 'New deal'),
    );
    wonPanel.dataset.moves = String(moves);
    wonPanel.hidden = false;
    clockText.textContent = clock(state.wonMs);
    say('Won!');
  }

  function play(text) {
    state.moves.push(text);
    state.held = null;
    state.hint = null;
    say('');
    render();
  }

  const handlers = {
    activate({ zone, depth }) {
      if (state.wonMs !== null) return;
      if (state.held) {
        if (sameZone(state.held.from, zone) && (depth === null || depth === state.held.depth)) {
          state.held = null;
          say('');
          mark();
          return;
        }
        handlers.drop(zone);
        return;
      }
      if (zone.kind === 'stock') {
        handlers.natural(zone, 0);
        return;
      }
      if (depth === null) return;
      handlers.pick(zone, depth);
    },
    pick(zone, depth) {
      if (state.wonMs !== null) return;
      state.held = { from: zone, depth };
      const names = heldElements(area, state.held).map((element) => element.getAttribute('aria-label'));
      say(`${names[0] ?? 'card'} picked: choose where it goes.`);
      mark();
    },
    drop(zone) {
      const held = state.held;
      if (!held) return;
      if (sameZone(held.from, zone)) {
        handlers.cancel();
        return;
      }
      // Following a hint plays the hinted move itself (a Virginia Reel
      // move may name its refills), so the hints stay on their line.
      const hint = state.hint;
      if (hint && hint.to && sameZone(hint.from, held.from) && hint.depth === held.depth && sameZone(hint.to, zone)) {
        play(hint.text);
        return;
      }
      const answer = ask({ op: 'drop', position: position(), held, to: zone });
      if (!answer) return;
      if (answer.move) {
        play(answer.move.text);
      } else {
        state.held = null;
        mark();
        say(`Not there: ${answer.reason}.`, 'error');
      }
    },
    natural(zone, depth) {
      if (state.wonMs !== null) return;
      const answer = ask({ op: 'natural', position: position(), held: { from: zone, depth } });
      state.held = null;
      if (answer) play(answer.text);
      else {
        render();
        say(`The ${zone.kind === 'stock' ? 'stock' : 'card'} has no move.`, 'error');
      }
    },
    cancel() {
      state.held = null;
      mark();
    },
    key(event, spot) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === 'u') undo();
      else if (event.key === 'h') hint();
      else if (event.key === 'Escape') handlers.cancel();
      else moveFocus(area, event, spot);
    },
  };
  gestures(area, handlers);

  function undo() {
    if (!state.moves.length || state.wonMs !== null) return;
    state.moves.pop();
    state.held = null;
    state.hint = null;
    say('Move taken back.');
    render();
  }

  async function hint() {
    if (state.wonMs !== null) return;
    const asked = state.moves.length;
    hintButton.disabled = true;
    say('Thinking…');
    try {
      const answer = await thinker.ask({ op: 'hint', position: position(), budget: SOLVER_BUDGET });
      if (state.moves.length !== asked) return;
      if (answer.kind === 'play' && answer.move) {
        state.hint = answer.move;
        render();
        say(`Hint: ${describeMove(state.current.view, answer.move)} (${answer.move.text}).`, 'hint');
      } else if (answer.kind === 'no_winning_line') say('No winning line from here: undo some moves.', 'error');
      else if (answer.kind === 'already_won') say('Won already.');
      else say('The solver found no line within its budget.', 'error');
    } catch (error) {
      say(error.message, 'error');
    } finally {
      hintButton.disabled = false;
    }
  }

  async function newDeal() {
    state.seed = null;
    history.replaceState(null, '', `/practice/${slug}`);
    await deal();
  }

  async function deal() {
    state.moves = [];
    state.held = null;
    state.hint = null;
    state.wonMs = null;
    wonPanel.hidden = true;
    let note = 'a seed you chose';
    if (state.seed === null) {
      dealLine.textContent = 'Finding a deal the solver proves winnable…';
      area.replaceChildren();
      try {
        const found = await thinker.ask({ op: 'proved_deal', game: slug, first_seed: randomSeed(), count: DEAL_SEEDS, budget: SOLVER_BUDGET });
        state.seed = found.seed;
        note = found.proved ? 'a deal the solver proved winnable' : 'no deal proved winnable quickly; this one may not be';
      } catch (error) {
        state.seed = randomSeed();
        note = `not proved (${error.message})`;
      }
      history.replaceState(null, '', `/practice/${slug}?seed=${state.seed}`);
    }
    dealLine.textContent = `Seed ${state.seed} · ${note}`;
    state.startedAt = performance.now();
    render();
    area.dataset.seed = String(state.seed);
    area.querySelector('[tabindex]')?.focus({ preventScroll: true });
  }

  hintButton.addEventListener('click', hint);
  undoButton.addEventListener('click', undo);
  newButton.addEventListener('click', newDeal);
  // The clock shows the time since the deal; the won screen keeps it.
  setInterval(() => {
    if (state.startedAt !== null && state.wonMs === null) clockText.textContent = clock(performance.now() - state.startedAt);
  }, 500);
  document.addEventListener('keydown', (event) => {
    if (area.contains(event.target) || event.target.closest?.('input, textarea')) return;
    if (event.key === 'u' || event.key === 'h') handlers.key(event, null);
  });
  deal();
}
