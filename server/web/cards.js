// Cards and boards, drawn from a `View` (docs/PROTOCOL.md: zones with
// `hidden`, the face-down count, and `face_up`, bottom first). Face-down
// cards are drawn as backs and carry no name: the page is never told them
// while a race runs. A finished race's replay also has the whole board (a
// `Board`, from the revealed deal): its face-down cards are then drawn
// face up, marked as having been face down.
// The board knows no rules: on a board drawn to play (`play` in `board`)
// each face-up card and each zone says where it is (`data-zone-kind`,
// `data-zone-index`, `data-depth` from the top) and has an accessible name
// ("seven of hearts, pile 3"); the practice and race screens ask the
// engine what a gesture on them means.

const SUITS = {
  c: { symbol: '♣', name: 'clubs', colour: 'black' },
  d: { symbol: '♦', name: 'diamonds', colour: 'red' },
  h: { symbol: '♥', name: 'hearts', colour: 'red' },
  s: { symbol: '♠', name: 'spades', colour: 'black' },
};

const RANKS = {
  A: ['A', 'ace'], 2: ['2', 'two'], 3: ['3', 'three'], 4: ['4', 'four'], 5: ['5', 'five'],
  6: ['6', 'six'], 7: ['7', 'seven'], 8: ['8', 'eight'], 9: ['9', 'nine'], T: ['10', 'ten'],
  J: ['J', 'jack'], Q: ['Q', 'queen'], K: ['K', 'king'],
};

// `h('div', {class: 'x'}, child, 'text')`: an element, its attributes and
// children (strings become text nodes: names are never read as HTML).
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// "seven of hearts" for "7h".
export function cardName(code) {
  const rank = RANKS[code[0]];
  const suit = SUITS[code[1]];
  return rank && suit ? `${rank[1]} of ${suit.name}` : code;
}

// A face-up card, e.g. "Th": the ten of hearts, in red.
export function cardFace(code) {
  const rank = RANKS[code[0]];
  const suit = SUITS[code[1]];
  if (!rank || !suit) return h('span', { class: 'card unknown' }, code);
  return h(
    'span',
    { class: `card face ${suit.colour}`, 'data-card': code, role: 'img', 'aria-label': cardName(code) },
    h('span', { class: 'corner', 'aria-hidden': 'true' }, h('span', { class: 'rank' }, rank[0]), h('span', { class: 'suit' }, suit.symbol)),
    h('span', { class: 'pip', 'aria-hidden': 'true' }, suit.symbol),
  );
}

// A card that was face down on the board, shown once the deal is public.
function wasFaceDown(code) {
  const card = cardFace(code);
  card.classList.add('was-face-down');
  card.setAttribute('aria-label', `${cardName(code)}, face down`);
  return card;
}

export function cardBack() {
  return h('span', { class: 'card back', role: 'img', 'aria-label': 'face-down card' });
}

function emptySlot(label) {
  return h('span', { class: 'card empty', 'aria-label': `${label}: empty` }, h('span', { class: 'slot-label' }, label));
}

// The name of a zone in the notation (docs/NOTATION.md): 1, c1, s, w, f1, A1, r1, x.
export function zoneName(zone) {
  const index = (zone.index ?? 0) + 1;
  switch (zone.kind) {
    case 'pile': return String(index);
    case 'cell': return `c${index}`;
    case 'stock': return 's';
    case 'waste': return 'w';
    case 'foundation': return `f${index}`;
    case 'reserve': return `r${index}`;
    case 'position': {
      const row = Math.floor((zone.index ?? 0) / 8);
      return `${'ABC'[row] ?? '?'}${((zone.index ?? 0) % 8) + 1}`;
    }
    case 'discard': return 'x';
    default: return '?';
  }
}

// A zone's name for people: "pile 3", "the stock", "position B4".
export function zoneTitle(zone) {
  const index = (zone.index ?? 0) + 1;
  switch (zone.kind) {
    case 'stock': return 'the stock';
    case 'waste': return 'the waste';
    case 'discard': return 'the discard';
    case 'position': return `position ${zoneName(zone)}`;
    default: return `${zone.kind} ${index}`;
  }
}

// Whether two zones are the same place.
export function sameZone(a, b) {
  return !!a && !!b && a.kind === b.kind && (a.index ?? null) === (b.index ?? null);
}

// The zone an element of a board lies in, read back from its attributes.
export function zoneOf(element) {
  const place = element?.closest?.('[data-zone-kind]');
  if (!place) return null;
  const zone = { kind: place.dataset.zoneKind };
  if (place.dataset.zoneIndex !== undefined) zone.index = Number(place.dataset.zoneIndex);
  return zone;
}

// Marks `element` as a place or a card to play: where it lies, focusable,
// and named for people.
function playable(element, zone, depth, name) {
  element.dataset.zoneKind = zone.kind;
  if (zone.index !== undefined && zone.index !== null) element.dataset.zoneIndex = String(zone.index);
  if (depth !== null) element.dataset.depth = String(depth);
  element.setAttribute('role', 'button');
  element.setAttribute('tabindex', '0');
  element.setAttribute('aria-label', name);
  return element;
}

function zoneKey(zone) {
  return zone.index === undefined || zone.index === null ? zone.kind : `${zone.kind}-${zone.index}`;
}

// A pile: its face-down cards as backs, then its face-up cards fanned down.
function pileOf(view, play, hiddenCards) {
  const cards = [];
  for (let i = 0; i < view.hidden; i += 1) cards.push(hiddenCards ? wasFaceDown(hiddenCards[i]) : cardBack());
  const title = zoneTitle(view.zone);
  view.face_up.forEach((code, index) => {
    const card = cardFace(code);
    if (play) playable(card, view.zone, view.face_up.length - 1 - index, `${cardName(code)}, ${title}`);
    cards.push(card);
  });
  const name = zoneName(view.zone);
  const element = h(
    'div',
    { class: 'zone pile', 'data-zone': zoneKey(view.zone), 'aria-label': `pile ${name}` },
    cards.length ? cards : emptySlot(name),
  );
  if (play) {
    element.dataset.zoneKind = view.zone.kind;
    element.dataset.zoneIndex = String(view.zone.index);
    if (!view.face_up.length) playable(element.firstChild, view.zone, null, `${title}, empty`);
  }
  return element;
}

// A zone shown by its top card and a count: stock, waste, cells,
// foundations, reserves, the discard, Virginia Reel's positions.
function slotOf(view, play, hiddenCards) {
  const total = view.hidden + view.face_up.length;
  const name = zoneName(view.zone);
  const title = zoneTitle(view.zone);
  let top;
  if (view.face_up.length) {
    const code = view.face_up[view.face_up.length - 1];
    top = cardFace(code);
    if (play) playable(top, view.zone, 0, `${cardName(code)}, ${title}`);
  } else if (view.hidden && hiddenCards) {
    top = wasFaceDown(hiddenCards[hiddenCards.length - 1]);
  } else if (view.hidden) {
    top = cardBack();
    if (play) playable(top, view.zone, 0, `${title}, ${total} face down`);
  } else {
    top = emptySlot(name);
    if (play) playable(top, view.zone, null, `${title}, empty`);
  }
  return h(
    'div',
    {
      class: `zone slot ${view.zone.kind}`, 'data-zone': zoneKey(view.zone), title: name,
      'data-zone-kind': play ? view.zone.kind : null, 'data-zone-index': play ? view.zone.index : null,
    },
    top,
    total > 1 ? h('span', { class: 'count', 'aria-label': `${total} cards` }, total) : null,
  );
}

const TOP_ROW = ['stock', 'waste', 'cell', 'discard', 'foundation'];

// A whole board, laid out by its zones' kinds: the stock, waste, cells,
// discard and foundations in a row, then the piles side by side, then
// Virginia Reel's three rows of positions and its reserves.
// `play`: draw it to be played (see the top of this file). `whole`: the
// same position as a `Board`, every card in it, once the deal is public.
export function board(view, play = false, whole = null) {
  const zones = view.zones ?? [];
  // Each zone's face-down cards, bottom first, when they are known: a
  // Board's zones come in the view's order.
  const hiddenOf = new Map();
  (whole?.zones ?? []).forEach((zone, index) => {
    const shown = zones[index];
    if (shown && sameZone(shown.zone, zone.zone) && zone.face_down === shown.hidden && zone.face_down > 0) {
      hiddenOf.set(shown, zone.cards.slice(0, zone.face_down));
    }
  });
  const slot = (zone) => slotOf(zone, play, hiddenOf.get(zone));
  const pile = (zone) => pileOf(zone, play, hiddenOf.get(zone));
  const ofKind = (kind) => zones.filter((zone) => zone.zone.kind === kind);
  const piles = ofKind('pile');
  const positions = ofKind('position');
  const reserves = ofKind('reserve');
  const top = TOP_ROW.flatMap(ofKind).map(slot);
  const columns = Math.max(piles.length, top.length, positions.length ? 8 : 0, reserves.length, 6);
  const parts = [];
  if (top.length) parts.push(h('div', { class: 'row top-row' }, top));
  if (positions.length) parts.push(h('div', { class: 'row positions' }, positions.map(slot)));
  if (reserves.length) parts.push(h('div', { class: 'row reserves' }, reserves.map(slot)));
  if (piles.length) parts.push(h('div', { class: 'row piles' }, piles.map(pile)));
  const element = h('div', { class: `board game-${view.game}${play ? ' play' : ''}`, 'data-game': view.game }, parts);
  element.style.setProperty('--columns', String(columns));
  return element;
}
