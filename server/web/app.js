// Patience Race's web page: today's leaderboards live (`/`), past days of a
// game (`/days/GAME`), and a room watched as a spectator (`/room/CODE`).
// Everything comes over the race protocol's WebSocket; the page keeps to
// what a spectator is sent: during a race, progress counts only (boards
// too in an `open_boards` room); after `race_ended`, the results, the
// reveal and every board, played back from `replay_boards`.

import { Connection, GAMES, gameOf, sha256Hex } from './protocol.js';
import { board, h } from './cards.js';

const main = document.getElementById('main');
const connectionLine = document.getElementById('connection');

// ----- Formatting -----

function duration(ms) {
  if (ms === null || ms === undefined) return '–';
  const total = Number(ms);
  const minutes = Math.floor(total / 60000);
  const seconds = ((total % 60000) / 1000).toFixed(1).padStart(4, '0');
  return `${minutes}:${seconds}`;
}

const STATUS_TEXT = {
  waiting: 'waiting', racing: 'racing', won: 'won', resigned: 'resigned',
  stuck: 'stuck', out_of_time: 'out of time', left: 'left',
};

function status(value) {
  return h('span', { class: `status status-${value}` }, STATUS_TEXT[value] ?? value);
}

function medal(rank) {
  return h('span', { class: 'medal', 'aria-hidden': 'true' }, ['🥇', '🥈', '🥉'][rank - 1] ?? `${rank}.`);
}

function errorBox(text) {
  return h('p', { class: 'error', role: 'alert' }, text);
}

function replaceChildren(element, ...children) {
  element.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined));
}

// ----- Routes -----

function parseRoute(path) {
  const room = /^\/room\/([34679ACDEFGHJKMNPQRTWXY]{6})$/i.exec(path);
  if (room) return { name: 'room', code: room[1].toUpperCase() };
  const days = /^\/days\/([a-z-]+)$/.exec(path);
  if (days && gameOf(days[1])) return { name: 'days', game: days[1] };
  return { name: 'today' };
}

function markNavigation(route) {
  document.getElementById('nav-today').toggleAttribute('aria-current', route.name === 'today');
  document.getElementById('nav-days').toggleAttribute('aria-current', route.name === 'days');
  for (const link of document.querySelectorAll('[aria-current]')) {
    if (link.hasAttribute('aria-current')) link.setAttribute('aria-current', 'page');
  }
}

document.getElementById('watch-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const code = document.getElementById('watch-code').value.trim().toUpperCase();
  if (/^[34679ACDEFGHJKMNPQRTWXY]{6}$/.test(code)) location.assign(`/room/${code}`);
});

// ----- Today's leaderboards, live -----

function leaderboardRows(rows, freshName) {
  if (!rows.length) return h('p', { class: 'meta' }, 'No finished attempt on the ranking yet.');
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {},
      h('th', { class: 'num' }, '#'), h('th', {}, 'Player'), h('th', {}, 'Status'),
      h('th', { class: 'num' }, 'Time'), h('th', { class: 'num' }, 'Moves'),
      h('th', { class: 'num hide-narrow' }, 'Home'))),
    h('tbody', {}, rows.map((row) => h('tr', { class: row.name === freshName ? 'fresh' : null, 'data-rank': row.rank },
      h('td', { class: 'num' }, row.rank), h('td', { class: 'name' }, row.name), h('td', {}, status(row.status)),
      h('td', { class: 'num' }, duration(row.elapsed_ms)), h('td', { class: 'num' }, row.moves),
      h('td', { class: 'num hide-narrow' }, row.cards_home)))),
  ));
}

function todayView(connection) {
  const pages = new Map();
  const panels = new Map();
  const closedSeen = new Map();
  const grid = h('div', { class: 'grid', id: 'leaderboards' });
  for (const game of GAMES) {
    const panel = h('section', { class: 'panel leaderboard', id: `lb-${game.slug}`, 'data-game': game.slug, 'aria-live': 'polite' },
      h('h2', {}, game.title), h('p', { class: 'meta' }, 'Loading…'));
    panels.set(game.slug, panel);
    grid.append(panel);
  }
  replaceChildren(main, h('h1', {}, "Today's daily deal"), h('p', { class: 'meta' },
    'Everyone plays the same proved deal once a day; the leaderboards update as attempts finish.'), grid);

  function render(slug, freshName) {
    const page = pages.get(slug);
    const panel = panels.get(slug);
    const game = gameOf(slug);
    replaceChildren(panel,
      h('h2', {}, game.title, page.day_over ? null : h('span', { class: 'live-badge' }, 'live')),
      h('p', { class: 'meta' }, page.date, ' · ',
        h('span', { 'data-count': 'finishers' }, page.finishers), ' ranked · ',
        h('span', { 'data-count': 'playing' }, page.playing), ' playing · ',
        h('span', { 'data-count': 'unranked' }, page.unranked), ' unranked'),
      leaderboardRows(page.rows, freshName),
      page.reveal ? h('p', { class: 'reveal' }, `seed ${page.reveal.seed} · salt ${page.reveal.salt}`) : null,
      h('p', { class: 'meta' }, h('a', { href: `/days/${slug}` }, 'Past days →')),
    );
  }

  function follow(slug) {
    connection.request({ type: 'follow', game: slug, limit: 20 }, ['leaderboard_page']).then((answer) => {
      if (answer.type !== 'error') return;
      const panel = panels.get(slug);
      const text = answer.code === 'game_unavailable' ? 'Not dealt on this server.' : `Unavailable: ${answer.message}`;
      replaceChildren(panel, h('h2', {}, gameOf(slug).title), h('p', { class: 'meta', 'data-unavailable': answer.code }, text));
    });
  }

  return {
    ready() { for (const game of GAMES) follow(game.slug); },
    event(message) {
      if (message.type === 'leaderboard_page') {
        const page = message.page;
        pages.set(page.game, page);
        render(page.game);
        // The day followed has closed (its final page, with the reveal):
        // follow the new today, once per closed day.
        if (page.day_over && closedSeen.get(page.game) !== page.date) {
          closedSeen.set(page.game, page.date);
          follow(page.game);
        }
      } else if (message.type === 'leaderboard_update') {
        const update = message.update;
        const page = pages.get(update.game);
        if (!page) return;
        if (update.date !== page.date) {
          follow(update.game);
          return;
        }
        page.finishers = update.finishers;
        page.unranked = update.unranked;
        page.playing = update.playing;
        if (update.row) {
          for (const row of page.rows) if (row.rank >= update.row.rank) row.rank += 1;
          page.rows.push(update.row);
          page.rows.sort((a, b) => a.rank - b.rank);
          page.rows = page.rows.slice(0, 20);
        }
        render(update.game, update.row?.name);
      }
    },
  };
}

// ----- Past days -----

function daysView(connection, slug) {
  const game = gameOf(slug);
  const list = h('div', { id: 'days', 'aria-live': 'polite' }, h('p', { class: 'meta' }, 'Loading…'));
  const more = h('button', { type: 'button', hidden: true }, 'Older days');
  let oldest = null;
  let loaded = 0;
  replaceChildren(main,
    h('h1', {}, `Past days: ${game.title}`),
    h('nav', { class: 'tabs', 'aria-label': 'Games' }, GAMES.map((other) =>
      h('a', { href: `/days/${other.slug}`, 'aria-current': other.slug === slug ? 'page' : null }, other.title))),
    h('section', { class: 'panel' }, list, more));

  function day(summary) {
    return h('article', { class: 'day', 'data-date': summary.date },
      h('h2', {}, summary.date),
      h('p', { class: 'meta' }, `${summary.finishers} ranked · ${summary.winners} won`),
      summary.podium.length
        ? h('ol', { class: 'podium' }, summary.podium.map((row) => h('li', {},
          medal(row.rank), h('span', { class: 'name' }, row.name), ' ', status(row.status),
          ` ${duration(row.elapsed_ms)} · ${row.moves} moves`)))
        : h('p', { class: 'meta' }, 'Nobody on the ranking.'),
      h('p', { class: 'reveal' }, `seed ${summary.reveal.seed} · salt ${summary.reveal.salt}`));
  }

  function load() {
    more.disabled = true;
    const request = { type: 'daily_days', game: slug, limit: 14 };
    if (oldest) request.before = oldest;
    connection.request(request, ['days_page']).then((answer) => {
      more.disabled = false;
      if (answer.type === 'error') {
        replaceChildren(list, errorBox(`Could not load the days: ${answer.message}`));
        return;
      }
      const page = answer.page;
      if (!loaded) list.replaceChildren();
      loaded += page.days.length;
      if (!loaded) list.append(h('p', { class: 'meta' }, 'No closed day yet.'));
      for (const summary of page.days) list.append(day(summary));
      if (page.days.length) oldest = page.days[page.days.length - 1].date;
      more.hidden = !page.more;
    });
  }
  more.addEventListener('click', load);

  return {
    ready() { oldest = null; loaded = 0; load(); },
    event() {},
  };
}

// ----- A room, as a spectator -----

function roomView(connection, code) {
  const state = { room: null, race: null, result: null, countdownUntil: null, replay: null, ended: false };
  const header = h('div', { id: 'room-header' });
  const racers = h('div', { class: 'racers', id: 'racers', 'aria-live': 'polite' });
  const results = h('div', { id: 'results-area' });
  const replayArea = h('div', { id: 'replay-area' });
  replaceChildren(main, h('h1', {}, `Room ${code}`), h('section', { class: 'panel' }, header, racers), results, replayArea);
  let countdownTimer = null;

  function seatState(seat) {
    if (!state.race) return null;
    return state.race.boards.find((entry) => entry.seat === seat) ?? null;
  }

  // A rival's board is drawn only where the protocol lets a spectator see
  // it: in an open_boards room, or once the race is over.
  function boardShown(entry) {
    if (!entry || !entry.board) return false;
    return state.ended || Boolean(state.room?.options?.open_boards);
  }

  function renderHeader() {
    const room = state.room;
    if (!room) return;
    const game = gameOf(room.game);
    const phase = state.ended ? 'finished' : room.phase;
    document.body.dataset.phase = phase;
    const items = [
      h('p', { class: 'meta' },
        `${game ? game.title : room.game} · `, h('span', { id: 'phase', 'data-phase': phase }, phase),
        ` · ${room.players.length}/${room.max_players} seats · ${room.spectators} watching`,
        room.options.open_boards ? ' · open boards' : '', room.options.undo_allowed ? ' · undo allowed' : ''),
    ];
    if (phase === 'countdown' && state.countdownUntil) {
      const left = Math.max(0, state.countdownUntil - Date.now());
      items.push(h('p', { class: 'countdown' }, `Starting in ${(left / 1000).toFixed(1)} s`));
    }
    if (phase === 'racing' && !room.options.open_boards) {
      items.push(h('p', { class: 'notice' },
        'Boards stay hidden until the race ends: every racer plays the same deal, so a rival\'s cards would tell the others theirs. Progress is shown live.'));
    }
    replaceChildren(header, items);
  }

  function renderRacers() {
    const room = state.room;
    if (!room) return;
    const cards = gameOf(room.game)?.cards ?? 52;
    replaceChildren(racers, room.players.map((player) => {
      const entry = seatState(player.seat);
      const progress = entry?.progress;
      const count = (key, label) => h('div', {},
        h('span', { class: 'label' }, label),
        h('span', { class: 'value', 'data-count': key }, progress ? progress[key] : 0));
      const home = progress ? progress.cards_home : 0;
      const bar = h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': cards, 'aria-valuenow': home }, h('span'));
      bar.firstChild.style.width = `${Math.min(100, (home / cards) * 100)}%`;
      return h('article', { class: 'racer', 'data-seat': player.seat },
        h('div', { class: 'racer-head' },
          h('span', { class: `dot${player.connected ? ' on' : ''}`, title: player.connected ? 'connected' : 'disconnected' }),
          h('span', { class: 'racer-name' }, player.name), botMark(player.bot), status(entry?.status ?? player.status)),
        h('div', { class: 'counts' },
          count('moves', 'moves'), count('cards_home', `home /${cards}`), count('runs_home', 'runs home'),
          count('cards_uncovered', 'uncovered'), count('stock_turned', 'stock turned'),
          h('div', {}, h('span', { class: 'label' }, 'time'), h('span', { class: 'value', 'data-count': 'elapsed' }, duration(progress?.elapsed_ms ?? 0)))),
        bar,
        boardShown(entry) && !state.ended ? board(entry.board) : null);
    }));
  }

  // A seat the server's bot plays says so, whatever its name.
  function botMark(level) {
    return level ? h('span', { class: 'bot-mark', title: `a ${level} bot the server runs` }, ` bot (${level})`) : null;
  }

  async function renderResults() {
    const result = state.result;
    if (!result) return;
    const game = result.reveal.game;
    const table = h('div', { class: 'table-wrap' }, h('table', { id: 'standings' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', {}, 'Player'), h('th', {}, 'Status'),
        h('th', { class: 'num' }, 'Time'), h('th', { class: 'num' }, 'Moves'), h('th', { class: 'num' }, 'Home'))),
      h('tbody', {}, result.standings.map((standing) => h('tr', { 'data-seat': standing.seat },
        h('td', { class: 'num' }, standing.rank), h('td', { class: 'name' }, standing.name, botMark(standing.bot)), h('td', {}, status(standing.status)),
        h('td', { class: 'num' }, duration(standing.progress.elapsed_ms)), h('td', { class: 'num' }, standing.progress.moves),
        h('td', { class: 'num' }, standing.progress.cards_home))))));
    const check = h('span', { id: 'commitment-check' }, 'checking…');
    replaceChildren(results, h('section', { class: 'panel', id: 'results' },
      h('h2', {}, 'Results'), table,
      h('h3', {}, 'The deal, revealed'),
      h('p', { class: 'reveal', id: 'reveal' }, `game ${game} · seed ${result.reveal.seed} · salt ${result.reveal.salt}`),
      state.race?.commitment ? h('p', { class: 'meta' }, 'Commitment at the start: ', h('span', { class: 'reveal' }, state.race.commitment), ' ', check) : null,
      result.open_boards ? h('p', { class: 'meta' }, 'This race showed every board live (open boards).') : null));
    if (state.race?.commitment) {
      const digest = await sha256Hex(`patience-race:v1:${game}:${result.reveal.seed}:${result.reveal.salt}`);
      if (digest === null) {
        check.textContent = '(this browser checks it only over HTTPS or on this machine)';
      } else if (digest === state.race.commitment) {
        check.textContent = '✓ matches the seed and salt';
        check.className = 'check-ok';
      } else {
        check.textContent = '✗ does not match the seed and salt';
        check.className = 'check-bad';
      }
    }
  }

  function renderAll() {
    renderHeader();
    renderRacers();
  }

  function loadReplay() {
    const raceId = state.result?.race_id;
    if (raceId === null || raceId === undefined || state.replay) return;
    state.replay = { loading: true };
    replaceChildren(replayArea, h('section', { class: 'panel' }, h('h2', {}, 'Replay'), h('p', { class: 'meta' }, 'Loading the boards…')));
    connection.request({ type: 'replay_boards', race_id: raceId }, ['boards_replay']).then((answer) => {
      if (answer.type === 'error') {
        state.replay = null;
        replaceChildren(replayArea, h('section', { class: 'panel' }, h('h2', {}, 'Replay'), errorBox(`No replay: ${answer.message}`)));
        return;
      }
      state.replay = replayPlayer(answer.replay);
      replaceChildren(replayArea, state.replay.element);
    });
  }

  function endRace(result) {
    // Set before anything is drawn: from here every board is public.
    state.ended = true;
    document.body.dataset.raceEnded = 'true';
    state.result = result;
    renderAll();
    renderResults();
    loadReplay();
  }

  function tickCountdown() {
    clearInterval(countdownTimer);
    countdownTimer = setInterval(() => {
      if (!state.countdownUntil || Date.now() > state.countdownUntil || state.room?.phase !== 'countdown') {
        clearInterval(countdownTimer);
      }
      renderHeader();
    }, 200);
  }

  return {
    ready() {
      state.race = null;
      connection.request({ type: 'spectate', code }, ['room_joined']).then((answer) => {
        if (answer.type === 'error') {
          replaceChildren(header, errorBox(answer.code === 'room_not_found'
            ? `No room has the code ${code} (or it has closed).`
            : `Cannot watch this room: ${answer.message}`));
        }
      });
    },
    event(message) {
      switch (message.type) {
        case 'room_joined':
        case 'room_update':
          state.room = message.room;
          renderAll();
          break;
        case 'snapshot':
          state.room = message.room;
          state.race = message.race ? {
            commitment: message.race.commitment,
            boards: message.race.boards.map((entry) => ({ ...entry })),
          } : null;
          if (message.race?.result && !state.ended) endRace(message.race.result);
          else renderAll();
          break;
        case 'countdown':
          state.countdownUntil = Date.now() + Number(message.starts_in_ms);
          tickCountdown();
          renderHeader();
          break;
        case 'race_started':
          // The deal as dealt is the same for every racer; it is not drawn
          // here, so that a spectator's page never shows a card of a board
          // while that board's race runs (unless the room has open boards).
          state.race = {
            commitment: message.commitment,
            boards: (state.room?.players ?? []).map((player) => ({
              seat: player.seat, status: 'racing', board: null,
              progress: { moves: 0, cards_home: 0, runs_home: 0, cards_uncovered: 0, stock_turned: 0, elapsed_ms: 0 },
            })),
          };
          renderAll();
          break;
        case 'progress': {
          const entry = seatState(message.seat);
          if (entry) {
            entry.progress = message.progress;
            if (message.board) entry.board = message.board;
          }
          renderRacers();
          break;
        }
        case 'finished': {
          const entry = seatState(message.seat);
          if (entry) entry.status = message.status;
          renderRacers();
          break;
        }
        case 'race_ended':
          endRace(message.result);
          break;
        default:
          break;
      }
    },
  };
}

// The boards of a finished race, played back: one seat at a time, step by
// step, or played at a steady pace.
function replayPlayer(replay) {
  // Best placed first: the winner's race is the one shown at once.
  replay = { ...replay, seats: [...replay.seats].sort((a, b) => a.rank - b.rank) };
  let seatIndex = 0;
  let step = 0;
  let timer = null;
  const seatTabs = h('div', { class: 'tabs', role: 'group', 'aria-label': 'Racer' });
  const boardArea = h('div', { id: 'replay-board' });
  const stepText = h('span', { class: 'replay-step', id: 'replay-step' });
  const slider = h('input', { type: 'range', min: 0, value: 0, 'aria-label': 'Move' });
  const first = h('button', { type: 'button', 'data-action': 'first', 'aria-label': 'First' }, '|◀');
  const previous = h('button', { type: 'button', 'data-action': 'previous', 'aria-label': 'Previous move' }, '◀');
  const play = h('button', { type: 'button', class: 'primary', 'data-action': 'play' }, 'Play');
  const next = h('button', { type: 'button', 'data-action': 'next', 'aria-label': 'Next move' }, '▶');
  const last = h('button', { type: 'button', 'data-action': 'last', 'aria-label': 'Last' }, '▶|');
  const element = h('section', { class: 'panel', id: 'replay' },
    h('h2', {}, 'Replay'), seatTabs,
    h('div', { class: 'replay-controls' }, first, previous, play, next, last, slider), stepText, boardArea);

  const seat = () => replay.seats[seatIndex];
  const steps = () => seat().boards.length - 1;

  function stop() {
    clearInterval(timer);
    timer = null;
    play.textContent = 'Play';
  }

  function show() {
    const current = seat();
    const total = steps();
    step = Math.max(0, Math.min(step, total));
    element.dataset.seat = String(current.seat);
    element.dataset.step = String(step);
    element.dataset.steps = String(total);
    slider.max = String(total);
    slider.value = String(step);
    first.disabled = previous.disabled = step === 0;
    next.disabled = last.disabled = step === total;
    const move = step > 0 ? current.moves[step - 1] : null;
    replaceChildren(stepText, `${current.name}: move ${step} of ${total}`,
      move ? [' · ', h('span', { class: 'move-text' }, move)] : ' · the deal');
    replaceChildren(boardArea, board(current.boards[step]));
    for (const [index, tab] of [...seatTabs.children].entries()) tab.setAttribute('aria-pressed', String(index === seatIndex));
  }

  replay.seats.forEach((entry, index) => {
    seatTabs.append(h('button', {
      type: 'button', 'data-seat': entry.seat,
      onclick: () => { stop(); seatIndex = index; step = 0; show(); },
    }, `${entry.rank}. ${entry.name}`));
  });
  first.addEventListener('click', () => { stop(); step = 0; show(); });
  previous.addEventListener('click', () => { stop(); step -= 1; show(); });
  next.addEventListener('click', () => { stop(); step += 1; show(); });
  last.addEventListener('click', () => { stop(); step = steps(); show(); });
  slider.addEventListener('input', () => { stop(); step = Number(slider.value); show(); });
  play.addEventListener('click', () => {
    if (timer) return stop();
    if (step >= steps()) step = 0;
    play.textContent = 'Pause';
    timer = setInterval(() => {
      step += 1;
      show();
      if (step >= steps()) stop();
    }, 400);
    return show();
  });
  if (replay.seats.length) show();
  else replaceChildren(boardArea, h('p', { class: 'meta' }, 'No boards.'));
  return { element };
}

// ----- Start -----

const route = parseRoute(location.pathname);
markNavigation(route);
let view = null;
const connection = new Connection({
  onEvent: (message) => view && view.event(message),
  onReady: () => view && view.ready(),
  onState: (state, text) => {
    connectionLine.dataset.state = state;
    connectionLine.textContent = text;
  },
});
if (route.name === 'room') view = roomView(connection, route.code);
else if (route.name === 'days') view = daysView(connection, route.game);
else view = todayView(connection);
if (route.name === 'days') document.getElementById('nav-days').href = `/days/${route.game}`;
connection.open();
