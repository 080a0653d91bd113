// Patience Race's web page: today's leaderboards live (`/`), past days of a
// game (`/days/GAME`), a game's ratings (`/ratings/GAME`), the lobby with
// its players' ratings (`/lobby`), a room watched as a spectator (`/room/CODE`), and
// practice on the rules engine in the page (`/practice`, practice.js).
// Everything comes over the race protocol's WebSocket; the page keeps to
// what a spectator is sent: during a race, progress counts only (boards
// too in an `open_boards` room); after `race_ended`, the results, the
// reveal and every board, played back from `replay_boards`.

import { Connection, GAMES, gameOf, sha256Hex } from './protocol.js';
import { board, h } from './cards.js';
import { practiceScreen } from './practice.js';
import { askName, raceBoard, raceClock, storedName } from './race.js';

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

/** "1 move", "2 moves". */
function plural(count, word) {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

const STATUS_TEXT = {
  waiting: 'waiting', racing: 'racing', won: 'won', resigned: 'resigned',
  stuck: 'stuck', out_of_time: 'out of time', left: 'left',
};

function status(value) {
  return h('span', { class: `status status-${value}` }, STATUS_TEXT[value] ?? value);
}

// A server bot's seat says so wherever it is shown (`bot` in PlayerInfo:
// its level, nil for a person): a bot never passes for a person.
function botMark(level) {
  if (!level) return null;
  return h('span', { class: 'bot-mark', 'data-bot': level, title: `a bot of the server, ${level}` }, `bot · ${level}`);
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
  if (room) return { name: 'room', code: room[1].toUpperCase(), join: new URLSearchParams(location.search).has('join') };
  if (path === '/lobby') return { name: 'lobby' };
  const practice = /^\/practice(?:\/([a-z-]+))?$/.exec(path);
  if (practice && (!practice[1] || gameOf(practice[1]))) {
    const seed = /^[0-9]{1,15}$/.exec(new URLSearchParams(location.search).get('seed') ?? '');
    return { name: 'practice', game: practice[1] ?? null, seed: seed ? Number(seed[0]) : null };
  }
  if (path === '/account') return { name: 'account' };
  const daily = /^\/daily\/([a-z-]+)$/.exec(path);
  if (daily && gameOf(daily[1])) return { name: 'daily', game: daily[1] };
  const record = /^\/race\/([1-9][0-9]{0,19})$/.exec(path);
  if (record) return { name: 'record', id: record[1] };
  const race = /^\/race\/([a-z-]+)$/.exec(path);
  if (race && gameOf(race[1])) {
    const query = new URLSearchParams(location.search);
    const bot = ['easy', 'normal', 'strong'].includes(query.get('bot')) ? query.get('bot') : null;
    const pace = /^[0-9]{1,6}$/.test(query.get('pace') ?? '') ? Number(query.get('pace')) : null;
    const bestOf = /^[1-9]$/.test(query.get('best_of') ?? '') ? Number(query.get('best_of')) : null;
    const players = /^[2-8]$/.test(query.get('players') ?? '') ? Number(query.get('players')) : null;
    return { name: 'race', game: race[1], private: query.has('private'), public: query.has('public'), bestOf, players, bot, pace };
  }
  const ratings = /^\/ratings(?:\/([a-z-]+))?$/.exec(path);
  if (ratings && (!ratings[1] || gameOf(ratings[1]))) return { name: 'ratings', game: ratings[1] ?? GAMES[0].slug };
  const days = /^\/days\/([a-z-]+)$/.exec(path);
  if (days && gameOf(days[1])) return { name: 'days', game: days[1] };
  return { name: 'today' };
}

function markNavigation(route) {
  document.getElementById('nav-today').toggleAttribute('aria-current', route.name === 'today');
  document.getElementById('nav-days').toggleAttribute('aria-current', route.name === 'days');
  document.getElementById('nav-practice').toggleAttribute('aria-current', route.name === 'practice');
  document.getElementById('nav-account').toggleAttribute('aria-current', route.name === 'account');
  document.getElementById('nav-lobby').toggleAttribute('aria-current', route.name === 'lobby');
  document.getElementById('nav-ratings').toggleAttribute('aria-current', route.name === 'ratings');
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

const UNRANKED_TEXT = { new_account: 'new account', review: 'in review' };

// An attempt off the ranking stands where it would rank, marked, with no
// rank of its own: a day is never empty, even when every account is new.
function unrankedMark(row) {
  if (!row.unranked) return null;
  return h('span', { class: 'unranked', title: `not ranked: ${UNRANKED_TEXT[row.unranked] ?? row.unranked}; shown where it would rank` },
    ` unranked (${UNRANKED_TEXT[row.unranked] ?? row.unranked})`);
}

// A finished attempt from a leaderboard_update takes its place on the board;
// the rows at that place or below move down one, and when it ranks their
// ranks (or the ranks they would take) go up one too.
function placeRow(page, row, limit) {
  const rows = page.rows.filter((kept) => kept.race_id !== row.race_id);
  for (const kept of rows) {
    if (kept.place >= row.place) {
      kept.place += 1;
      if (!row.unranked) kept.rank += 1;
    }
  }
  rows.push(row);
  rows.sort((a, b) => a.place - b.place);
  page.rows = rows.slice(0, limit);
}

function leaderboardRows(rows, freshName) {
  if (!rows.length) return h('p', { class: 'meta' }, 'No finished attempt yet.');
  return h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {},
      h('th', { class: 'num' }, '#'), h('th', {}, 'Player'), h('th', {}, 'Status'),
      h('th', { class: 'num' }, 'Time'), h('th', { class: 'num' }, 'Moves'),
      h('th', { class: 'num hide-narrow' }, 'Home'))),
    h('tbody', {}, rows.map((row) => h('tr', { class: row.name === freshName ? 'fresh' : null, 'data-rank': row.rank, 'data-unranked': row.unranked ?? null },
      h('td', { class: 'num' }, row.unranked ? '–' : row.rank), h('td', { class: 'name' }, row.name, unrankedMark(row)), h('td', {}, status(row.status)),
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
      h('p', { class: 'meta' }, h('a', { href: `/daily/${slug}`, 'data-daily': slug }, 'Play today\'s deal →'), ' · ', h('a', { href: `/days/${slug}` }, 'Past days →')),
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
        if (update.row) placeRow(page, update.row, 20);
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
          ` ${duration(row.elapsed_ms)} · ${plural(row.moves, 'move')} · `, h('a', { href: raceLink(row.race_id), 'data-race': row.race_id }, 'replay'))))
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

// ----- Ratings -----

// A rating's figure: whole hundredths on the wire, one decimal here.
function ratingFigure(hundredths) {
  return (Math.round(Number(hundredths) / 10) / 10).toFixed(1);
}

function ratingText(row) {
  return `${ratingFigure(row.rating)}${row.provisional ? '?' : ''}`;
}

// `/ratings/GAME`: the game's rating list, best first, one's own row
// marked (and added below the top rows when it is not among them), and
// one's own rating and rated races when signed in.
function ratingsView(connection, slug) {
  const game = gameOf(slug);
  const list = h('div', { id: 'ratings', 'aria-live': 'polite' }, h('p', { class: 'meta' }, 'Loading…'));
  const own = h('div', { id: 'own-rating' });
  replaceChildren(main,
    h('h1', {}, `Ratings: ${game.title}`),
    h('nav', { class: 'tabs', 'aria-label': 'Games' }, GAMES.map((other) =>
      h('a', { href: `/ratings/${other.slug}`, 'aria-current': other.slug === slug ? 'page' : null }, other.title))),
    h('section', { class: 'panel' }, list,
      h('p', { class: 'meta' },
        'Rated: quick races and public rooms, and rooms created rated; never with undo, open boards, a bot or one account in two seats. The winners place by finish order, everyone else ties for last. ',
        'The rating is μ − 3σ (the skill estimate less three times its uncertainty); ? marks a provisional one. ',
        'Players with a rated race in the last 90 days.')),
    h('section', { class: 'panel' }, own));

  function row(entry, mine) {
    return h('tr', { class: mine ? 'own' : null, 'data-name': entry.name, 'data-rank': entry.rank ?? '' },
      h('td', { class: 'num' }, entry.rank ?? '–'), h('td', { class: 'name' }, entry.name),
      h('td', { class: 'num rating' }, ratingText(entry)),
      h('td', { class: 'num hide-narrow' }, ratingFigure(entry.mu)),
      h('td', { class: 'num hide-narrow' }, ratingFigure(entry.sigma)),
      h('td', { class: 'num' }, entry.races));
  }

  function showList(page) {
    if (!page.rows.length) {
      replaceChildren(list, h('p', { class: 'meta' }, 'Nobody has a rated race of this game yet.'));
      return;
    }
    const mine = page.own?.name;
    const rows = page.rows.map((entry) => row(entry, entry.name === mine));
    if (page.own && !page.rows.some((entry) => entry.name === mine)) rows.push(row(page.own, true));
    replaceChildren(list, h('div', { class: 'table-wrap' }, h('table', {},
      h('thead', {}, h('tr', {},
        h('th', { class: 'num' }, '#'), h('th', {}, 'Player'), h('th', { class: 'num' }, 'Rating'),
        h('th', { class: 'num hide-narrow' }, 'μ'), h('th', { class: 'num hide-narrow' }, 'σ'),
        h('th', { class: 'num' }, 'Races'))),
      h('tbody', {}, rows))));
  }

  function showOwn(page) {
    if (!page.rating) {
      replaceChildren(own, h('p', { class: 'meta' }, `${page.name}: no rated race of this game yet.`));
      return;
    }
    replaceChildren(own,
      h('p', { id: 'own-rating-line' }, h('strong', {}, page.name), ` · rating ${ratingText(page.rating)}`,
        ` (μ ${ratingFigure(page.rating.mu)}, σ ${ratingFigure(page.rating.sigma)}) after ${page.rating.races} rated race${page.rating.races === 1 ? '' : 's'}`,
        page.rating.provisional ? ' · provisional' : ''),
      h('div', { class: 'table-wrap' }, h('table', { id: 'rating-history' },
        h('thead', {}, h('tr', {},
          h('th', { class: 'num' }, 'Race'), h('th', { class: 'num' }, 'Place'),
          h('th', { class: 'num' }, 'Before'), h('th', { class: 'num' }, 'After'))),
        h('tbody', {}, page.races.map((race) => h('tr', {},
          h('td', { class: 'num' }, race.race_id), h('td', { class: 'num' }, `${race.place} of ${race.racers}`),
          h('td', { class: 'num' }, ratingFigure(race.before)), h('td', { class: 'num' }, ratingFigure(race.after))))))));
  }

  let signedIn = false;
  return {
    signedIn() { signedIn = true; },
    ready() {
      connection.request({ type: 'ratings', game: slug, limit: 50 }, ['ratings_page']).then((answer) => {
        if (answer.type === 'error') replaceChildren(list, errorBox(`Could not load the ratings: ${answer.message}`));
        else showList(answer);
      });
      if (!signedIn) {
        replaceChildren(own, h('p', { class: 'meta' }, h('a', { href: '/account' }, 'Register or sign in'), ' to be rated.'));
        return;
      }
      connection.request({ type: 'rating_history', game: slug }, ['rating_history_page']).then((answer) => {
        if (answer.type !== 'error') showOwn(answer);
      });
    },
    event() {},
  };
}

// ----- A room, as a spectator -----

// The seat a tab holds in a room: its resume token and the last event
// seen, kept for the tab (sessionStorage), never in a URL.
function seatKey(code) {
  return `patience-seat-${code}`;
}

function savedSeat(code) {
  try {
    return JSON.parse(sessionStorage.getItem(seatKey(code)));
  } catch {
    return null;
  }
}

function saveSeat(code, seat) {
  try {
    if (seat) sessionStorage.setItem(seatKey(code), JSON.stringify(seat));
    else sessionStorage.removeItem(seatKey(code));
  } catch {
    // Storage refused: the seat is kept only while the page is open.
  }
}

// A series' score in words: `ada 2 - bob 1 (best of 5)`.
function seriesLine(series) {
  if (!series) return null;
  const scores = series.wins.map((entry) => `${entry.name} ${entry.wins}`).join(' - ');
  const won = series.winner ? `: ${series.winner} wins the series` : '';
  // Before its first race a series has no score yet.
  return scores ? `${scores} (best of ${series.best_of})${won}` : `best of ${series.best_of}`;
}

// ----- The lobby: open public rooms, one click to take a seat -----

// A room's players, each registered one with their rating at the room's
// game (`?` while provisional): `ada (3.4?), Bot 1`.
function seatedPlayers(room) {
  const ratings = room.ratings ?? [];
  return room.players.map((name, index) => {
    const rating = ratings[index];
    return rating ? `${name} (${ratingText(rating)})` : name;
  }).join(', ');
}

function lobbyView(connection) {
  const list = h('div', { id: 'lobby-rooms', 'aria-live': 'polite' });
  replaceChildren(main, h('h1', {}, 'Open rooms'),
    h('p', { class: 'meta' }, 'Public rooms waiting for players, on every server of this site. The list refreshes by itself.'),
    h('section', { class: 'panel' }, list),
    h('section', { class: 'panel', id: 'lobby-open' }, h('h2', {}, 'Open a room'),
      h('p', { class: 'meta' }, 'A public room of two seats, listed here until it fills: one race, or a series whose rematches count toward a best of three.'),
      GAMES.map((game) => h('p', { class: 'toolbar' }, `${game.title}: `,
        h('a', { class: 'button', href: `/race/${game.slug}?public`, 'data-open-room': game.slug }, 'one race'),
        h('a', { class: 'button', href: `/race/${game.slug}?public&best_of=3`, 'data-open-series': game.slug }, 'best of 3')))));
  let timer = null;
  function render(page) {
    if (!page.rooms.length) {
      replaceChildren(list, h('p', { class: 'meta', id: 'lobby-empty' }, 'No open public room right now: a quick race opens one.'));
      return;
    }
    replaceChildren(list, h('div', { class: 'table-wrap' }, h('table', { id: 'lobby-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Room'), h('th', {}, 'Game'), h('th', { class: 'num' }, 'Seats'),
        h('th', {}, 'Players'), h('th', {}, 'Series'), h('th', {}, ''))),
      h('tbody', {}, page.rooms.map((room) => h('tr', { 'data-code': room.code },
        h('td', { class: 'reveal' }, room.code),
        h('td', {}, gameOf(room.game)?.title ?? room.game),
        h('td', { class: 'num' }, `${room.players.length}/${room.max_players}`),
        h('td', {}, seatedPlayers(room)),
        h('td', {}, seriesLine(room.series) ?? ''),
        h('td', {}, h('a', { class: 'button primary', id: `join-${room.code}`, href: `/room/${room.code}?join` }, 'Join'))))))));
  }
  function load() {
    clearTimeout(timer);
    connection.request({ type: 'lobby' }, ['lobby_page']).then((answer) => {
      if (answer.type === 'error') {
        replaceChildren(list, errorBox(`No lobby: ${answer.message}`));
        return;
      }
      render(answer.page);
      timer = setTimeout(load, Math.max(500, Number(answer.page.refresh_ms)));
    });
  }
  return { ready: load, event() {} };
}

function roomView(connection, code, enginePromise, joinAsked = false) {
  const state = {
    room: null, race: null, result: null, countdownUntil: null, replay: null, ended: false,
    seat: null, token: null, lastSeq: 0, joinOnReady: false, mine: null, rematch: null, clock: raceClock(),
    quickWait: null,
  };
  const header = h('div', { id: 'room-header' });
  const seatControls = h('div', { class: 'toolbar', id: 'seat-controls' });
  const raceMessage = h('p', { class: 'message', id: 'race-message', role: 'status', 'aria-live': 'polite' });
  const myBoard = h('div', { class: 'play-area', id: 'my-board' });
  const seatPanel = h('section', { class: 'panel', id: 'my-seat' }, seatControls, raceMessage, myBoard);
  const say = (text, kind = 'info') => {
    raceMessage.textContent = text;
    raceMessage.dataset.kind = kind;
  };
  const racers = h('div', { class: 'racers', id: 'racers', 'aria-live': 'polite' });
  const results = h('div', { id: 'results-area' });
  const replayArea = h('div', { id: 'replay-area' });
  replaceChildren(main, h('h1', {}, `Room ${code}`), h('section', { class: 'panel' }, header, racers), seatPanel, results, replayArea);
  let countdownTimer = null;
  let clockTimer = null;
  let quickWaitTimer = null;

  function remember() {
    if (state.token) saveSeat(code, { token: state.token, seq: state.lastSeq });
  }

  async function mine() {
    if (!state.mine) {
      const engine = await enginePromise;
      state.mine = raceBoard(myBoard, engine, {
        game: state.room.game,
        send: (text) => connection.raw({ type: 'move', text }),
        say,
      });
    }
    return state.mine;
  }

  function myStatus() {
    return state.room?.players.find((player) => player.seat === state.seat)?.status ?? null;
  }

  function renderSeat() {
    const room = state.room;
    if (!room) return;
    const phase = state.ended ? 'finished' : room.phase;
    const open = ['lobby', 'dealing', 'countdown'].includes(phase);
    const controls = [];
    if (state.seat === null) {
      if (open && room.players.length < room.max_players) {
        controls.push(h('button', { type: 'button', class: 'primary', id: 'take-seat', onclick: takeSeat }, 'Take a seat'));
      } else if (!state.ended) {
        controls.push(h('span', { class: 'meta' }, 'Watching.'));
      }
    } else {
      const moves = seatState(state.seat)?.progress?.moves ?? 0;
      const mine = seatState(state.seat);
      controls.push(h('span', { class: 'meta', id: 'my-seat-line', 'data-seat': state.seat }, `You race in seat ${state.seat + 1} · `,
        h('span', { id: 'my-seat-moves' }, moves), moves === 1 ? ' move' : ' moves',
        mine ? [' · ⏱ ', h('span', { class: 'clock', id: 'my-clock', 'data-seat': state.seat }, duration(racerTime(mine)))] : null, '.'));
      if (phase === 'lobby' && room.owner === state.seat) {
        controls.push(h('button', { type: 'button', class: 'primary', id: 'start-early', onclick: () => connection.raw({ type: 'start_early' }) }, 'Start now'));
      }
      if (phase === 'lobby' || phase === 'countdown' || phase === 'dealing') {
        controls.push(h('button', {
          type: 'button', id: 'share', onclick: () => navigator.clipboard?.writeText(location.href).then(() => say('Link copied.'), () => say(location.href)),
        }, 'Copy the link'));
      }
      if (phase === 'racing' && myStatus() === 'racing') {
        controls.push(h('button', { type: 'button', id: 'resign', onclick: () => connection.raw({ type: 'resign' }) }, 'Resign'));
      }
      if (state.ended && state.result) {
        controls.push(h('button', { type: 'button', class: 'primary', id: 'rematch', onclick: () => connection.raw({ type: 'rematch', accept: true }) }, 'Rematch'));
        if (state.rematch?.status === 'open') {
          controls.push(h('button', { type: 'button', id: 'decline-rematch', onclick: () => connection.raw({ type: 'rematch', accept: false }) }, 'No rematch'));
        }
      }
    }
    if (state.quickWait && state.seat !== null && phase === 'lobby') controls.push(...quickWaitControls(state.quickWait));
    if (state.rematch) controls.push(h('p', { class: 'meta', id: 'rematch-status', 'data-status': state.rematch.status }, rematchText(state.rematch)));
    replaceChildren(seatControls, controls);
    seatPanel.hidden = !controls.length && state.seat === null;
  }

  // A quick race's wait: how long, the rating window, who else is about,
  // and once no rival came in time, the bot's offer.
  // The server tells the wait at each step of the window; between two,
  // the page counts on from the last, once a second.
  function quickWaited(wait) {
    return `Waiting ${Math.floor((Number(wait.waited_ms) + performance.now() - wait.receivedAt) / 1000)} s`;
  }

  function tickQuickWait() {
    const waited = document.getElementById('quick-waited');
    if (!state.quickWait) {
      clearInterval(quickWaitTimer);
      quickWaitTimer = null;
    } else if (waited) {
      waited.textContent = quickWaited(state.quickWait);
    }
  }

  function quickWaitControls(wait) {
    const window = wait.window === null || wait.window === undefined
      ? 'open to any rival' : `rivals within ${wait.window} rating points`;
    const controls = [h('p', { class: 'meta', id: 'quick-wait', 'data-waiting': wait.waiting, 'data-racing': wait.racing },
      h('span', { id: 'quick-waited' }, quickWaited(wait)), `, ${window}. `,
      h('span', { id: 'quick-counts' }, `${wait.waiting} waiting, ${wait.racing} racing ${gameOf(state.room.game).title}.`))];
    if (wait.bot_offer) {
      controls.push(h('p', { class: 'notice', id: 'bot-offer' }, 'No rival yet. Race a server bot now, or keep waiting.'),
        h('button', { type: 'button', class: 'primary', id: 'race-bot', onclick: () => connection.raw({ type: 'quick_race_answer', bot: true }) }, 'Race a bot'),
        h('button', { type: 'button', id: 'keep-waiting', onclick: () => connection.raw({ type: 'quick_race_answer', bot: false }) }, 'Keep waiting'));
    }
    return controls;
  }

  async function takeSeat() {
    const before = storedName();
    await askName(seatControls);
    if (!before) {
      // The connection said hello as a spectator: say it again by name.
      state.joinOnReady = true;
      connection.reconnect();
      return;
    }
    await connection.request({ type: 'leave' }, ['left']);
    join();
  }

  function join() {
    connection.request({ type: 'join_room', code }, ['room_joined', 'room_closed']).then((answer) => {
      if (answer.type === 'room_closed') {
        roomOver(answer.race_id);
      } else if (answer.type === 'error') {
        say(`No seat: ${answer.message}`, 'error');
        spectate();
      }
    });
  }

  function spectate() {
    connection.request({ type: 'spectate', code }, ['room_joined', 'room_closed']).then((answer) => {
      if (answer.type === 'room_closed') {
        roomOver(answer.race_id);
      } else if (answer.type === 'error') {
        replaceChildren(header, errorBox(answer.code === 'room_not_found'
          ? `No room has the code ${code}.`
          : `Cannot watch this room: ${answer.message}`));
      }
    });
  }

  // The room has closed after its race, which the server keeps: the
  // room's link leads to the race's page.
  function roomOver(raceId) {
    replaceChildren(header, h('p', { class: 'notice', id: 'room-over' },
      `The race of room ${code} is over, and the room has closed. `,
      h('a', { href: raceLink(raceId), id: 'race-link' }, 'Its results and replay stay on the race\'s page →')));
  }

  function rematchText(offer) {
    const names = (seats) => seats.map((seat) => state.room?.players.find((player) => player.seat === seat)?.name ?? `seat ${seat + 1}`).join(', ');
    switch (offer.status) {
      case 'open': return `Rematch: ${names(offer.accepted)} accepted${offer.waiting.length ? `; waiting for ${names(offer.waiting)}` : ''}.`;
      case 'ready': return 'Rematch: everyone accepted; the new room opens.';
      case 'declined': return `No rematch: ${names(offer.declined)} declined.`;
      default: return `No rematch: ${names(offer.waiting)} did not answer in time.`;
    }
  }

  function seatState(seat) {
    if (!state.race) return null;
    return state.race.boards.find((entry) => entry.seat === seat) ?? null;
  }

  // A racer's time: the race's clock while they race, and from their end
  // on the time it ended at (`finished`), which the clock no longer moves.
  function racerTime(entry) {
    if (!entry) return 0;
    if (entry.endedMs !== undefined) return entry.endedMs;
    if (entry.status === 'racing' && !state.ended && state.clock.running()) return state.clock.elapsed();
    return entry.progress?.elapsed_ms ?? 0;
  }

  // Moves the clocks on the page between the server's messages: the
  // race's, each racer's, one's own.
  function tickClocks() {
    const raceText = document.getElementById('race-clock');
    if (raceText) raceText.textContent = duration(state.clock.elapsed());
    for (const entry of state.race?.boards ?? []) {
      const text = duration(racerTime(entry));
      const count = racers.querySelector(`[data-seat="${entry.seat}"] [data-count="elapsed"]`);
      if (count) count.textContent = text;
      if (entry.seat === state.seat) {
        const own = document.getElementById('my-clock');
        if (own) own.textContent = text;
      }
    }
  }

  function startClock(elapsedMs, timeLimitMs) {
    state.clock.set(elapsedMs, timeLimitMs);
    clearInterval(clockTimer);
    clockTimer = setInterval(tickClocks, 100);
  }

  function stopClock() {
    state.clock.stop();
    clearInterval(clockTimer);
    clockTimer = null;
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
    if (room.series) items.push(h('p', { class: 'series', id: 'series' }, `Series: ${seriesLine(room.series)}`));
    if (phase === 'countdown' && state.countdownUntil) {
      const left = Math.max(0, state.countdownUntil - Date.now());
      items.push(h('p', { class: 'countdown' }, `Starting in ${(left / 1000).toFixed(1)} s`));
    }
    if (phase === 'racing' && state.clock.running()) {
      const limit = state.clock.limit();
      items.push(h('p', { class: 'race-clock' }, '⏱ ', h('span', { class: 'clock', id: 'race-clock' }, duration(state.clock.elapsed())),
        limit === null ? null : h('span', { class: 'meta' }, ` of ${duration(limit)}`)));
    }
    if (phase === 'racing' && !room.options.open_boards) {
      items.push(h('p', { class: 'notice' },
        'Boards stay hidden until the race ends: every racer plays the same deal, so a rival\'s cards would tell the others theirs. Progress is shown live.'));
    }
    replaceChildren(header, items);
  }

  /** Whether `game` has a stock to turn (Three Blind Mice has none). */
  function hasStock(game) {
    return game !== 'three-blind-mice';
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
      // One measure for every bar, one's own and a rival's alike.
      const home = progress ? (progress.cards_in_order ?? progress.cards_home) : 0;
      const bar = h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': cards, 'aria-valuenow': home }, h('span'));
      bar.firstChild.style.width = `${Math.min(100, (home / cards) * 100)}%`;
      return h('article', { class: 'racer', 'data-seat': player.seat },
        h('div', { class: 'racer-head' },
          h('span', { class: `dot${player.connected ? ' on' : ''}`, title: player.connected ? 'connected' : 'disconnected' }),
          h('span', { class: 'racer-name' }, player.name), botMark(player.bot), status(entry?.status ?? player.status)),
        h('div', { class: 'counts' },
          count('moves', 'moves'), count('cards_in_order', `${inOrderWords(room.game)} /${cards}`),
          count('cards_home', 'home'), count('runs_home', 'runs home'),
          count('cards_uncovered', 'uncovered'), hasStock(room.game) ? count('stock_turned', 'stock turned') : null,
          h('div', {}, h('span', { class: 'label' }, 'time'), h('span', { class: 'value clock', 'data-count': 'elapsed' }, duration(racerTime(entry))))),
        bar,
        boardShown(entry) && !state.ended ? board(entry.board) : null);
    }));
  }

  function renderResults() {
    if (!state.result) return;
    replaceChildren(results, resultsSection(state.result, { commitment: state.race?.commitment ?? null, ownSeat: state.seat ?? null }),
      state.room?.series ? h('p', { class: 'series', id: 'results-series' }, `Series: ${seriesLine(state.room.series)}`) : null);
  }

  function renderAll() {
    renderHeader();
    renderRacers();
    renderSeat();
  }

  function loadReplay() {
    const raceId = state.result?.race_id;
    if (raceId === null || raceId === undefined || state.replay) return;
    state.replay = true;
    showReplay(connection, raceId, replayArea, enginePromise);
  }

  function endRace(result) {
    // Set before anything is drawn: from here every board is public.
    state.ended = true;
    stopClock();
    state.mine?.stop();
    saveSeat(code, null);
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
      // A resume gets the events missed, or a snapshot: the race kept so
      // far stands until then. A spectator gets a snapshot.
      if (state.joinOnReady) {
        state.joinOnReady = false;
        join();
        return;
      }
      const seat = savedSeat(code);
      // The lobby's Join: one click, a seat (once the page knows a name).
      if (joinAsked && !seat?.token) {
        joinAsked = false;
        if (storedName()) {
          join();
        } else {
          takeSeat();
        }
        return;
      }
      if (!seat?.token) {
        state.race = null;
        spectate();
        return;
      }
      // Take the seat back: after a dropped socket, a reload or a server
      // restart, with no click.
      connection.request({ type: 'resume', token: seat.token, last_seq: seat.seq ?? 0 }, ['resumed']).then((answer) => {
        if (answer.type !== 'error') return;
        saveSeat(code, null);
        state.seat = null;
        state.token = null;
        spectate();
      });
    },
    event(message) {
      if (message.type === 'room_joined' && message.room.code !== code && message.seat !== null && message.seat !== undefined) {
        // A quick racer moved to a rival's room (or a bot's): that room's
        // page takes the seat with its token, as after a reload.
        saveSeat(code, null);
        saveSeat(message.room.code, { token: message.resume_token, seq: message.seq ?? 0 });
        location.replace(`/room/${message.room.code}`);
        return;
      }
      if (message.type === 'left' && message.code === code && state.quickWait) {
        // Leaving the waiting room for a rival's: the new room's page follows.
        return;
      }
      if (typeof message.seq === 'number' && message.seq > state.lastSeq) {
        state.lastSeq = message.seq;
        remember();
      }
      switch (message.type) {
        case 'quick_race_wait':
          state.quickWait = { ...message, receivedAt: performance.now() };
          renderSeat();
          if (quickWaitTimer === null) quickWaitTimer = setInterval(tickQuickWait, 1000);
          break;
        case 'room_joined':
          state.room = message.room;
          if (message.seat !== null && message.seat !== undefined) {
            state.seat = message.seat;
            state.token = message.resume_token;
            remember();
            // The lobby's `?join` is done: the room's link is the one to share.
            if (location.search) history.replaceState(null, '', `/room/${code}`);
          }
          renderAll();
          break;
        case 'resumed':
          state.room = message.room;
          state.seat = message.seat;
          state.token = message.resume_token;
          remember();
          if (message.room.phase === 'racing' && message.elapsed_ms !== null && message.elapsed_ms !== undefined) {
            startClock(message.elapsed_ms, null);
          }
          say('Back in your seat.');
          renderAll();
          break;
        case 'room_update':
          state.room = message.room;
          if (message.room.players.length > 1 || message.room.phase !== 'lobby') state.quickWait = null;
          renderAll();
          break;
        case 'move_accepted': {
          const entry = seatState(state.seat);
          if (entry) entry.progress = message.progress;
          mine().then((board) => board.accepted(message.board));
          renderRacers();
          renderSeat();
          break;
        }
        case 'move_rejected':
          mine().then((board) => board.rejected(message.message));
          break;
        case 'stuck':
          say('No move is left on your board: resign, or wait for the race to end.', 'error');
          break;
        case 'snapshot':
          state.room = message.room;
          state.race = message.race ? {
            commitment: message.race.commitment,
            // A racer already done: their time stands where their race ended.
            boards: message.race.boards.map((entry) => (entry.status === 'racing' ? { ...entry } : { ...entry, endedMs: entry.progress.elapsed_ms })),
          } : null;
          if (message.race && !message.race.result) startClock(message.race.elapsed_ms, message.race.time_limit_ms);
          if (message.race?.result && !state.ended) endRace(message.race.result);
          else renderAll();
          if (state.seat !== null && message.race) {
            const own = message.race.boards.find((entry) => entry.seat === state.seat);
            if (own?.board) mine().then((board) => board.setBoard(own.board, !message.race.result && myStatus() === 'racing'));
          }
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
              progress: { moves: 0, cards_home: 0, cards_in_order: 0, runs_home: 0, cards_uncovered: 0, stock_turned: 0, elapsed_ms: 0 },
            })),
          };
          // A race_started among the events a resume replays comes after
          // `resumed`, whose elapsed time the clock already holds.
          startClock(state.clock.running() ? state.clock.elapsed() : 0, message.time_limit_ms);
          renderAll();
          if (state.seat !== null) mine().then((board) => board.setBoard(message.board, true));
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
          if (entry) {
            entry.status = message.status;
            entry.endedMs = Number(message.elapsed_ms);
          }
          if (message.seat === state.seat && state.mine) state.mine.stop();
          renderRacers();
          renderSeat();
          break;
        }
        case 'race_ended':
          endRace(message.result);
          break;
        case 'rematch_offer':
          state.rematch = message.offer;
          renderSeat();
          break;
        case 'rematch_ready':
          // The new room's page takes the seat with its token, as after a
          // reload; leaving this page leaves the finished room.
          saveSeat(message.code, { token: message.resume_token, seq: 0 });
          location.assign(`/room/${message.code}`);
          break;
        default:
          break;
      }
    },
  };
}

// ----- A finished race: results, reveal, replay -----

// The lasting page of a finished race.
function raceLink(raceId) {
  return `/race/${raceId}`;
}

// The results of a finished race: the standings, the deal revealed and
// its commitment checked. `commitment`: the one published when the race
// started, if this page saw it; without it the page shows the commitment
// the reveal gives, to compare with the one seen at the start.
/** What the progress bars and the results' cards column of `game` count. */
function inOrderWords(game) {
  return game === 'three-blind-mice' ? 'in suit order' : 'home';
}

function resultsSection(result, { commitment = null, ownSeat = null } = {}) {
  const game = result.reveal.game;
  const table = h('div', { class: 'table-wrap' }, h('table', { id: 'standings' },
    h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', {}, 'Player'), h('th', {}, 'Status'),
      h('th', { class: 'num' }, 'Time'), h('th', { class: 'num' }, 'Moves'), h('th', { class: 'num' }, inOrderWords(game)))),
    h('tbody', {}, result.standings.map((standing) => h('tr', { 'data-seat': standing.seat, class: standing.seat === ownSeat ? 'own' : null },
      h('td', { class: 'num' }, standing.rank),
      h('td', { class: 'name' }, standing.seat === ownSeat ? `▶ ${standing.name} (you)` : standing.name, botMark(standing.bot)),
      h('td', {}, status(standing.status)),
      h('td', { class: 'num' }, duration(standing.progress.elapsed_ms)), h('td', { class: 'num' }, standing.progress.moves),
      h('td', { class: 'num' }, standing.progress.cards_in_order ?? standing.progress.cards_home))))));
  const order = h('p', { class: 'meta', id: 'standings-order' },
    `Order: winners by time, then most cards ${inOrderWords(game)}; at equal cards, playing to the end beats giving up, then lasting longer. `
    + 'Time: when each racer\'s race ended (a win, a resignation, the limit).');
  const check = h('span', { id: 'commitment-check' }, 'checking…');
  const shown = h('span', { class: 'reveal', id: 'commitment' }, commitment ?? '…');
  const raceId = result.race_id;
  const lasting = raceId !== null && raceId !== undefined && location.pathname !== raceLink(raceId);
  const section = h('section', { class: 'panel', id: 'results' },
    h('h2', {}, 'Results'), table, order,
    h('h3', {}, 'The deal, revealed'),
    h('p', { class: 'reveal', id: 'reveal' }, `game ${game} · seed ${result.reveal.seed} · salt ${result.reveal.salt}`),
    h('p', { class: 'meta' }, commitment ? 'Commitment at the start: ' : 'Commitment (SHA-256 of the game, seed and salt): ', shown, ' ', check),
    result.open_boards ? h('p', { class: 'meta' }, 'This race showed every board live (open boards).') : null,
    lasting ? h('p', { class: 'meta' }, h('a', { href: raceLink(raceId), id: 'race-link' }, `This race's page: ${location.origin}${raceLink(raceId)}`), ' (it stays)') : null);
  sha256Hex(`patience-race:v1:${game}:${result.reveal.seed}:${result.reveal.salt}`).then((digest) => {
    if (digest === null) {
      check.textContent = '(this browser checks it only over HTTPS or on this machine)';
    } else if (!commitment) {
      shown.textContent = digest;
      check.textContent = '(compare it with the one shown when the race started)';
    } else if (digest === commitment) {
      check.textContent = '✓ matches the seed and salt';
      check.className = 'check-ok';
    } else {
      check.textContent = '✗ does not match the seed and salt';
      check.className = 'check-bad';
    }
  });
  return section;
}

// Loads a finished race's boards into `area` and plays them back, the
// cards that were face down shown face up (the deal is public now).
function showReplay(connection, raceId, area, enginePromise) {
  replaceChildren(area, h('section', { class: 'panel' }, h('h2', {}, 'Replay'), h('p', { class: 'meta' }, 'Loading the boards…')));
  connection.request({ type: 'replay_boards', race_id: raceId }, ['boards_replay']).then(async (answer) => {
    if (answer.type === 'error') {
      replaceChildren(area, h('section', { class: 'panel' }, h('h2', {}, 'Replay'), errorBox(`No replay: ${answer.message}`)));
      return;
    }
    const replay = answer.replay;
    let engine = null;
    try {
      engine = await enginePromise;
    } catch {
      // No engine (no WebAssembly): the replay shows the boards as sent.
    }
    const revealed = new Map();
    for (const seat of replay.seats) {
      try {
        if (engine) revealed.set(seat.seat, engine.ask({ op: 'revealed', game: replay.reveal.game, seed: replay.reveal.seed, moves: seat.moves }));
      } catch {
        // A log the engine cannot replay: that seat's boards as sent.
      }
    }
    replaceChildren(area, replayPlayer(replay, revealed).element);
  });
}

// The boards of a finished race, played back: one seat at a time, step by
// step, or played at a steady pace. `revealed`: each seat's whole boards,
// by seat, whose face-down cards are drawn face up.
function replayPlayer(replay, revealed = new Map()) {
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
    replaceChildren(boardArea, board(current.boards[step], false, revealed.get(current.seat)?.[step] ?? null));
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

// `/race/ID`: a finished race's lasting page, from the server's store,
// however long ago it ran: the same results and replay as its room's page
// showed when it ended. A daily attempt's waits for its day to close.
function raceRecordView(connection, raceId, enginePromise) {
  const header = h('div', { id: 'race-record-header' }, h('p', { class: 'meta' }, 'Loading the race…'));
  const results = h('div', { id: 'results-area' });
  const replayArea = h('div', { id: 'replay-area' });
  replaceChildren(main, h('h1', {}, `Race ${raceId}`), h('section', { class: 'panel' }, header), results, replayArea);
  let shown = false;

  function refused(answer) {
    const text = {
      race_not_found: `No finished race has the number ${raceId}.`,
      replay_not_yet: 'This is a daily attempt, and its day is still being played: its page opens once the day has closed for everyone.',
    }[answer.code] ?? `This race cannot be shown: ${answer.message}`;
    replaceChildren(header, h('p', { class: answer.code === 'replay_not_yet' ? 'notice' : 'error', role: 'alert', 'data-refused': answer.code }, text),
      h('p', { class: 'meta' }, h('a', { href: '/' }, 'Back to today\'s races →')));
  }

  function show(record) {
    shown = true;
    const game = gameOf(record.result.reveal.game);
    const ended = new Date(Number(record.ended_at_ms));
    document.body.dataset.raceEnded = 'true';
    replaceChildren(header, h('p', { class: 'meta', id: 'race-record-meta', 'data-race': raceId },
      `${game ? game.title : record.result.reveal.game} · `,
      record.daily ? `the daily deal of ${record.daily} · ` : `${record.result.standings.length} racers · `,
      `ended ${ended.toISOString().replace('T', ' ').slice(0, 16)} UTC`));
    replaceChildren(results, resultsSection(record.result));
    showReplay(connection, Number(raceId), replayArea, enginePromise);
  }

  return {
    ready() {
      if (shown) return;
      connection.request({ type: 'replay', race_id: Number(raceId) }, ['replay_data', 'attempt_replay']).then((answer) => {
        if (answer.type === 'replay_data') show(answer.race);
        else if (answer.type === 'attempt_replay') refused({ code: 'replay_not_yet' });
        else refused(answer);
      });
    },
    event() {},
  };
}

// ----- The daily deal, played in the page -----

// `/daily/GAME`: the signed-in player's attempt at today's deal (one per
// game and day), with the day's standings live beside the board.
function dailyView(connection, slug, enginePromise) {
  const game = gameOf(slug);
  const controls = h('div', { class: 'toolbar', id: 'daily-controls' });
  const message = h('p', { class: 'message', id: 'race-message', role: 'status', 'aria-live': 'polite' });
  const boardArea = h('div', { class: 'play-area', id: 'my-board' });
  const standings = h('section', { class: 'panel leaderboard', id: 'daily-standings', 'aria-live': 'polite' }, h('h2', {}, "Today's standings"));
  replaceChildren(main, h('h1', {}, `Today's deal: ${game.title}`),
    h('div', { class: 'daily-layout' }, h('section', { class: 'panel' }, controls, message, boardArea), standings));
  const say = (text, kind = 'info') => {
    message.textContent = text;
    message.dataset.kind = kind;
  };
  let signedIn = null;
  let mine = null;
  let page = null;

  async function board() {
    if (!mine) mine = raceBoard(boardArea, await enginePromise, { game: slug, send: (text) => connection.raw({ type: 'move', text }), say });
    return mine;
  }

  function renderStandings(freshName) {
    if (!page) return;
    replaceChildren(standings, h('h2', {}, "Today's standings"),
      h('p', { class: 'meta' }, page.date, ' · ', h('span', { 'data-count': 'finishers' }, page.finishers), ' ranked · ',
        h('span', { 'data-count': 'playing' }, page.playing), ' playing · ', h('span', { 'data-count': 'unranked' }, page.unranked), ' unranked'),
      leaderboardRows(page.rows, freshName));
  }

  function playing(attempt) {
    board().then((own) => own.setBoard(attempt.board, true));
    replaceChildren(controls,
      h('span', { class: 'meta', id: 'my-seat-line' }, `${attempt.date} · `, h('span', { id: 'my-seat-moves' }, attempt.progress.moves), ' moves',
        attempt.unranked ? ' · a new account: played, not ranked today' : ''),
      h('button', { type: 'button', id: 'resign', onclick: () => connection.raw({ type: 'resign' }) }, 'Resign'));
  }

  return {
    signedIn(answer) { signedIn = answer; },
    ready() {
      connection.request({ type: 'follow', game: slug, limit: 10 }, ['leaderboard_page']);
      if (!signedIn) {
        replaceChildren(controls, h('p', {}, 'The daily deal is played signed in: ', h('a', { href: '/account' }, 'register or sign in'), ', then come back.'));
        return;
      }
      // The player starts the clock: nothing of the deal comes before
      // `daily_play`, which opens the attempt and starts its clock.
      const start = () => {
        replaceChildren(controls, h('p', { class: 'meta' }, 'Opening the attempt…'));
        connection.request({ type: 'daily_play', game: slug }, ['daily_started']).then((answer) => {
          if (answer.type === 'error') replaceChildren(controls, h('p', { id: 'daily-closed' }, answer.message));
        });
      };
      replaceChildren(controls, h('div', { id: 'daily-terms' },
        h('p', {}, `Today's ${game.title} deal: one attempt, no undo.`),
        h('p', { class: 'meta' }, 'The clock starts when you press Start and runs until the attempt ends, even if you leave this page; the board shows once it runs. An attempt you began already is taken back where it stopped, its clock still running.'),
        h('button', { type: 'button', id: 'daily-start', onclick: start }, 'Start')));
    },
    event(event) {
      switch (event.type) {
        case 'daily_started':
          playing(event.attempt);
          break;
        case 'move_accepted':
          board().then((own) => own.accepted(event.board));
          document.getElementById('my-seat-moves')?.replaceChildren(String(event.progress.moves));
          break;
        case 'move_rejected':
          board().then((own) => own.rejected(event.message));
          break;
        case 'daily_finished': {
          const result = event.result;
          mine?.stop();
          replaceChildren(controls, h('p', { id: 'daily-result', 'data-status': result.status },
            `${STATUS_TEXT[result.status] ?? result.status} in ${duration(result.progress.elapsed_ms)} with ${plural(result.progress.moves, 'move')} · `,
            result.unranked
              ? `would rank ${result.rank} of ${result.finishers + 1} (not ranked: ${result.unranked === 'new_account' ? 'a new account' : 'under review'}; shown on the board, marked)`
              : `rank ${result.rank} of ${result.finishers}`),
            h('p', { class: 'meta' }, 'Its page, with the replay, opens once the day has closed: ',
              h('a', { href: raceLink(result.race_id), id: 'race-link' }, `${location.origin}${raceLink(result.race_id)}`)));
          break;
        }
        case 'leaderboard_page':
          page = event.page;
          renderStandings();
          // Played already: say so instead of offering a start.
          if (page.own && document.getElementById('daily-terms')) {
            replaceChildren(controls, h('p', { id: 'daily-closed' },
              `You have played today's ${game.title} deal already (${STATUS_TEXT[page.own.status] ?? page.own.status} in ${duration(page.own.elapsed_ms)}): one attempt per day.`));
          }
          break;
        case 'leaderboard_update': {
          const update = event.update;
          if (!page || update.date !== page.date) return;
          page.finishers = update.finishers;
          page.unranked = update.unranked;
          page.playing = update.playing;
          if (update.row) placeRow(page, update.row, 10);
          renderStandings(update.row?.name);
          break;
        }
        default:
          break;
      }
    },
  };
}

// ----- The account -----

// The account's token is kept in this browser's storage (never in a URL),
// and every connection signs in with it after `welcome`.
const TOKEN_KEY = 'patience-token';

function storedToken() {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function storeAccount(token, name) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
    if (name) localStorage.setItem('patience-name', name);
  } catch {
    // Storage refused: signed in for this page only.
  }
}

// `/account`: register, or sign in with a code from another device or
// from `patience sign-in-code`; once signed in, a code for another device
// (or for `patience sign-in CODE`), and sign out.
function accountView(connection) {
  const area = h('section', { class: 'panel', id: 'account' });
  const line = h('p', { class: 'message', id: 'account-message', role: 'status', 'aria-live': 'polite' });
  replaceChildren(main, h('h1', {}, 'Your account'), area, line);
  const say = (text, kind = 'info') => {
    line.textContent = text;
    line.dataset.kind = kind;
  };
  let player = null;

  function signedIn(answer) {
    player = { id: answer.player, name: answer.name };
    storeAccount(answer.token ?? storedToken(), answer.name);
    const code = h('div', { id: 'sign-in-code-area' });
    const record = h('div', { id: 'record' });
    replaceChildren(area,
      h('p', { id: 'signed-in-as', 'data-player': answer.player }, 'Signed in as ', h('strong', {}, answer.name), '.'),
      h('div', { class: 'toolbar' },
        h('button', { type: 'button', id: 'show-code', onclick: showCode }, 'Sign in on another device'),
        h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out')),
      code, record);
    connection.request({ type: 'player_stats' }, ['player_record']).then((reply) => {
      if (reply.type === 'error') return;
      showRecord(record, reply.record);
    });
  }

  // The player's record on the daily deal, per game: closed days only.
  function showRecord(element, record) {
    if (!record.games.length) {
      replaceChildren(element, h('h2', {}, 'Your daily record'), h('p', { class: 'meta' }, 'No closed day played yet: a day counts once it is over.'));
      return;
    }
    replaceChildren(element, h('h2', {}, 'Your daily record'),
      h('div', { class: 'table-wrap' }, h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Game'), h('th', { class: 'num' }, 'Days'), h('th', { class: 'num' }, 'Wins'),
          h('th', { class: 'num' }, 'Best rank'), h('th', { class: 'num' }, 'Best time'), h('th', { class: 'num' }, 'Streak'),
          h('th', { class: 'num' }, 'Win streak'))),
        h('tbody', {}, record.games.map((row) => h('tr', { 'data-game': row.game },
          h('td', {}, gameOf(row.game)?.title ?? row.game), h('td', { class: 'num' }, row.days_played), h('td', { class: 'num' }, row.wins),
          h('td', { class: 'num' }, row.best_rank ?? '–'), h('td', { class: 'num' }, duration(row.best_time_ms)),
          h('td', { class: 'num' }, `${row.play_streak} (best ${row.best_play_streak})`),
          h('td', { class: 'num' }, `${row.win_streak} (best ${row.best_win_streak})`)))))),
      h('p', { class: 'meta' }, `Through ${record.through}.`));
  }

  async function showCode() {
    const answer = await connection.request({ type: 'request_sign_in_code' }, ['sign_in_code']);
    if (answer.type === 'error') {
      say(answer.message, 'error');
      return;
    }
    const minutes = Math.round(Number(answer.expires_in_ms) / 60000);
    replaceChildren(document.getElementById('sign-in-code-area'),
      h('p', {}, 'On the other device, open Account and type this code, or run ', h('code', {}, `patience sign-in ${answer.code}`), ':'),
      h('p', { class: 'sign-in-code', id: 'sign-in-code' }, answer.code),
      h('p', { class: 'meta' }, `It works once, within ${minutes} minutes. Anyone who reads it before you use it can sign in as you: show it to no one else.`));
  }

  async function signOut() {
    const answer = await connection.request({ type: 'sign_out' }, ['signed_out']);
    if (answer.type === 'error') {
      say(answer.message, 'error');
      return;
    }
    storeAccount(null);
    player = null;
    say('Signed out on this browser; your other devices stay signed in.');
    signedOut();
  }

  function signedOut() {
    const name = h('input', { id: 'register-name', maxlength: 24, required: true, value: storedName() ?? '', 'aria-label': 'Name' });
    const code = h('input', { id: 'redeem-code', maxlength: 12, required: true, autocomplete: 'one-time-code', autocapitalize: 'characters', 'aria-label': 'Sign-in code' });
    const register = h('form', { class: 'name-form', id: 'register-form' }, h('label', { for: 'register-name' }, 'A new account: '), name, ' ',
      h('button', { type: 'submit', class: 'primary' }, 'Register'));
    const redeem = h('form', { class: 'name-form', id: 'redeem-form' }, h('label', { for: 'redeem-code' }, 'A sign-in code from another device: '), code, ' ',
      h('button', { type: 'submit' }, 'Sign in'));
    register.addEventListener('submit', async (event) => {
      event.preventDefault();
      const answer = await connection.request({ type: 'register', name: name.value.trim() }, ['registered']);
      if (answer.type === 'error') say(answer.message, 'error');
      else {
        say('Registered: this browser keeps you signed in.');
        signedIn(answer);
      }
    });
    redeem.addEventListener('submit', async (event) => {
      event.preventDefault();
      const answer = await connection.request({ type: 'redeem_sign_in_code', code: code.value }, ['signed_in']);
      if (answer.type === 'error') say(answer.message, 'error');
      else {
        say('Signed in: this browser keeps you signed in.');
        signedIn(answer);
      }
    });
    replaceChildren(area, register, redeem);
  }

  return {
    ready() {
      if (player) signedIn({ player: player.id, name: player.name });
      else signedOut();
    },
    signedIn(answer) {
      player = { id: answer.player, name: answer.name };
    },
    event() {},
  };
}

// ----- Start -----

// Practice needs the engine and no connection.
async function startPractice(route) {
  connectionLine.hidden = true;
  const { Engine, Thinker } = globalThis.PatienceEngine;
  try {
    const module = await Engine.compile();
    const engine = await Engine.create(module);
    practiceScreen(main, { slug: route.game, seed: route.seed }, engine, new Thinker(module));
  } catch (error) {
    replaceChildren(main, errorBox(`The rules engine could not start: ${error.message}`));
  }
}

// The race launcher (`/race/GAME`; `?private` for a private room,
// `?public` for a room the lobby lists; `&players=N` seats, `&best_of=N`
// a series): asks
// the name once, opens or joins the room, keeps its seat's token for the
// tab and goes to the room's page, which takes the seat back with it.
function raceLauncher(connection, route) {
  const game = gameOf(route.game);
  const area = h('div', { id: 'launcher' });
  const series = route.bestOf ? `, best of ${route.bestOf}` : '';
  let title = `Quick race: ${game.title}`;
  if (route.bot) title = `Race a bot (${route.bot}): ${game.title}`;
  else if (route.private) title = `A private room: ${game.title}${series}`;
  else if (route.public) title = `A public room: ${game.title}${series}`;
  replaceChildren(main, h('h1', {}, title), area);
  let busy = false;
  return {
    async ready() {
      if (busy) return;
      busy = true;
      if (!storedName()) {
        // Asked once; the connection then says hello again by that name.
        await askName(area);
        busy = false;
        connection.reconnect();
        return;
      }
      const opens = route.private || route.public;
      replaceChildren(area, h('p', { class: 'meta' }, opens ? 'Opening a room…' : 'Finding a race…'));
      const options = { undo_allowed: false, time_limit_ms: null, open_boards: false };
      let request = { type: 'quick_race', game: route.game };
      if (route.bot) {
        // One bot seat: the room is full with it, so its countdown starts.
        request = {
          type: 'create_room', game: route.game, max_players: 2, public: false, options,
          bots: [{ level: route.bot, pace_ms: route.pace }],
        };
      } else if (opens) {
        request = {
          type: 'create_room', game: route.game, max_players: route.players ?? (route.private ? 4 : 2), public: !route.private,
          options: route.bestOf ? { ...options, best_of: route.bestOf } : options,
        };
      }
      const answer = await connection.request(request, ['room_joined']);
      if (answer.type === 'error') {
        busy = false;
        replaceChildren(area, errorBox(`No race: ${answer.message}`));
        return;
      }
      saveSeat(answer.room.code, { token: answer.resume_token, seq: answer.seq ?? 0 });
      location.replace(`/room/${answer.room.code}`);
    },
    event() {},
  };
}

const route = parseRoute(location.pathname);
markNavigation(route);
let view = null;
const connection = new Connection({
  name: () => storedName() ?? 'web spectator',
  onEvent: (message) => view && view.event(message),
  // Signs in with the stored token first, if there is one.
  onReady: async () => {
    const token = storedToken();
    if (token) {
      const answer = await connection.request({ type: 'authenticate', token }, ['authenticated']);
      if (answer.type === 'error' && answer.code === 'invalid_token') storeAccount(null);
      else if (answer.type === 'authenticated') view?.signedIn?.(answer);
    }
    if (view) view.ready();
  },
  onState: (state, text) => {
    connectionLine.dataset.state = state;
    connectionLine.textContent = text;
  },
});
if (route.name === 'practice') startPractice(route);
else if (route.name === 'room') {
  const { Engine } = globalThis.PatienceEngine;
  view = roomView(connection, route.code, Engine.compile().then((module) => Engine.create(module)), route.join);
} else if (route.name === 'record') {
  const { Engine } = globalThis.PatienceEngine;
  view = raceRecordView(connection, route.id, Engine.compile().then((module) => Engine.create(module)));
} else if (route.name === 'race') view = raceLauncher(connection, route);
else if (route.name === 'account') view = accountView(connection);
else if (route.name === 'lobby') view = lobbyView(connection);
else if (route.name === 'daily') {
  const { Engine } = globalThis.PatienceEngine;
  view = dailyView(connection, route.game, Engine.compile().then((module) => Engine.create(module)));
}
else if (route.name === 'days') view = daysView(connection, route.game);
else if (route.name === 'ratings') view = ratingsView(connection, route.game);
else view = todayView(connection);
if (route.name === 'days') document.getElementById('nav-days').href = `/days/${route.game}`;
if (route.name !== 'practice') connection.open();
