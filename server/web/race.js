// A racer's own board in a room (`/room/CODE` with a seat): drawn from the
// board the server sent (`race_started`, `move_accepted`, a `snapshot`),
// played with the same gestures and keys as practice, each move computed
// by the engine in the page and shown at once, then sent as `move` and
// confirmed by the server. A move the server refuses takes the board back
// to the server's, with its reason. Rivals are shown by the room page as
// progress counts only (the fair-play rule).
//
// Also the race's clock, the name a player races under, asked once and kept in the
// browser's storage, and the race launcher (`/race/GAME`): a quick race,
// or a private room whose link is shared.

import { board, h, sameZone, zoneOf } from './cards.js';
import { gestures, heldElements, moveFocus, zoneElement } from './practice.js';

const NAME_KEY = 'patience-name';

// The race's clock, kept as the terminal client keeps it: set from the
// time the server gives (0 at `race_started`, `elapsed_ms` in a snapshot
// or on a resume) and run on this page's monotonic clock from there, so
// that it ticks between the server's messages.
export function raceClock() {
  let startedAt = null;
  let limitMs = null;
  return {
    // The race stood at `elapsedMs` now; it ends at `timeLimitMs`.
    set(elapsedMs, timeLimitMs) {
      startedAt = performance.now() - Number(elapsedMs);
      if (timeLimitMs !== null && timeLimitMs !== undefined) limitMs = Number(timeLimitMs);
    },
    stop() {
      startedAt = null;
    },
    running() {
      return startedAt !== null;
    },
    // The race's time now, never past its limit; null before the start.
    elapsed() {
      if (startedAt === null) return null;
      const elapsed = Math.max(0, performance.now() - startedAt);
      return limitMs === null ? elapsed : Math.min(elapsed, limitMs);
    },
    limit() {
      return limitMs;
    },
  };
}

export function storedName() {
  try {
    return localStorage.getItem(NAME_KEY);
  } catch {
    return null;
  }
}

// Asks for the player's name once, in `container`; resolves with it (at
// once if it is stored).
export function askName(container) {
  const known = storedName();
  if (known) return Promise.resolve(known);
  return new Promise((resolve) => {
    const input = h('input', { id: 'player-name', name: 'name', maxlength: 24, required: true, autocomplete: 'nickname', 'aria-label': 'Your name' });
    const form = h('form', { class: 'name-form', id: 'name-form' },
      h('label', { for: 'player-name' }, 'Your name in races: '), input, ' ',
      h('button', { type: 'submit', class: 'primary' }, 'Go'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      try {
        localStorage.setItem(NAME_KEY, name);
      } catch {
        // Storage refused (private mode): the name holds for this page.
      }
      form.remove();
      resolve(name);
    });
    container.replaceChildren(form);
    input.focus();
  });
}

// The racer's board: `send(text)` sends a move; `say(text, kind)` writes
// the message line.
export function raceBoard(area, engine, { game, send, say }) {
  const state = { server: null, pending: [], held: null, drawn: null, playing: false };

  const position = () => ({ game, view: state.server, moves: state.pending });

  function ask(request) {
    try {
      return engine.ask(request);
    } catch (error) {
      say(error.message, 'error');
      return null;
    }
  }

  function mark() {
    for (const name of ['held', 'target']) {
      for (const element of area.querySelectorAll(`.${name}`)) element.classList.remove(name);
    }
    if (!state.held) return;
    for (const element of heldElements(area, state.held)) element.classList.add('held');
    const lit = ask({ op: 'targets', position: position(), held: state.held }) ?? [];
    for (const zone of lit) zoneElement(area, zone)?.classList.add('target');
  }

  function render() {
    if (!state.server) {
      area.replaceChildren();
      return;
    }
    const answer = ask({ op: 'state', position: position() });
    // A move that turned up a card shows the server's board until its
    // answer says which card it was: the engine's is a guess.
    const view = answer && !answer.guessed ? answer.view : state.server;
    const focused = document.activeElement && area.contains(document.activeElement)
      ? { zone: zoneOf(document.activeElement), depth: document.activeElement.dataset.depth } : null;
    const drawn = board(view, state.playing);
    drawn.dataset.pending = String(state.pending.length);
    area.replaceChildren(drawn);
    mark();
    if (focused?.zone) {
      const all = [...area.querySelectorAll('[data-zone-kind][tabindex]')];
      (all.find((element) => sameZone(zoneOf(element), focused.zone) && element.dataset.depth === focused.depth)
        ?? all.find((element) => sameZone(zoneOf(element), focused.zone)))?.focus();
    }
  }

  function play(text) {
    state.held = null;
    state.pending.push(text);
    send(text);
    say('');
    render();
  }

  const handlers = {
    activate({ zone, depth }) {
      if (!state.playing) return;
      if (state.held) {
        if (sameZone(state.held.from, zone) && (depth === null || depth === state.held.depth)) handlers.cancel();
        else handlers.drop(zone);
        return;
      }
      if (zone.kind === 'stock') handlers.natural(zone, 0);
      else if (depth !== null) handlers.pick(zone, depth);
    },
    pick(zone, depth) {
      if (!state.playing) return;
      state.held = { from: zone, depth };
      const names = heldElements(area, state.held).map((element) => element.getAttribute('aria-label'));
      say(`${names[0] ?? 'card'} picked: choose where it goes.`);
      mark();
    },
    drop(zone) {
      const held = state.held;
      if (!held || !state.playing) return;
      if (sameZone(held.from, zone)) {
        handlers.cancel();
        return;
      }
      const answer = ask({ op: 'drop', position: position(), held, to: zone });
      if (answer?.move) play(answer.move.text);
      else {
        state.held = null;
        mark();
        if (answer) say(`Not there: ${answer.reason}.`, 'error');
      }
    },
    natural(zone, depth) {
      if (!state.playing) return;
      const answer = ask({ op: 'natural', position: position(), held: { from: zone, depth } });
      state.held = null;
      if (answer) play(answer.text);
      else {
        mark();
        say(`The ${zone.kind === 'stock' ? 'stock' : 'card'} has no move.`, 'error');
      }
    },
    cancel() {
      state.held = null;
      mark();
    },
    key(event, spot) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === 'Escape') handlers.cancel();
      else moveFocus(area, event, spot);
    },
  };
  gestures(area, handlers);

  return {
    // The server's board (after `race_started`, a `snapshot`, a resume);
    // moves not yet answered are dropped: the server's board has them or
    // they were lost with the connection.
    setBoard(view, playing) {
      state.server = view;
      state.pending = [];
      state.held = null;
      state.playing = playing;
      render();
    },
    accepted(view) {
      state.pending.shift();
      state.server = view;
      render();
    },
    rejected(reason) {
      state.pending = [];
      state.held = null;
      render();
      say(`The server refused the move: ${reason}`, 'error');
    },
    stop() {
      state.playing = false;
      state.held = null;
      render();
    },
  };
}
