// The race protocol over one WebSocket (docs/PROTOCOL.md): MessagePack maps
// with a string `type`, one message per binary frame, `hello` first.
//
// Requests that expect one answer go one at a time (`request`), because an
// `error` carries nothing that names the request it answers; everything
// else the server pushes (room events, leaderboard updates) goes to the
// `onEvent` handler.

const MessagePack = globalThis.MessagePack;

// 64-bit integers (seeds) decode as BigInt, so that none loses digits.
const decoder = new MessagePack.Decoder({ useBigInt64: true });

export const PROTOCOL_VERSION = 1;

// The games of this protocol, in the order menus list them.
export const GAMES = [
  { slug: 'three-blind-mice', title: 'Three Blind Mice', cards: 52 },
  { slug: 'indian', title: 'Indian', cards: 104 },
  { slug: 'midshipman', title: 'Midshipman', cards: 104 },
  { slug: 'virginia-reel', title: 'Virginia Reel', cards: 104 },
];

export function gameOf(slug) {
  return GAMES.find((game) => game.slug === slug);
}

// Errors after which the server closes the connection: the page does not
// come back on its own after these.
const FATAL = new Set(['unsupported_version', 'hello_required', 'rate_limited', 'server_full', 'too_slow']);

export class Connection {
  // `onEvent(message)` for pushed messages; `onReady()` after each
  // `welcome` (again after a reconnection); `onState(state, text)` for the
  // connection line.
  // `name()`: the name `hello` gives (a spectator's default).
  constructor({ onEvent, onReady, onState, name }) {
    this.name = name ?? (() => 'web spectator');
    this.onEvent = onEvent;
    this.onReady = onReady;
    this.onState = onState;
    this.socket = null;
    this.pending = [];
    this.current = null;
    this.retryMs = 1000;
    this.stopped = false;
  }

  open() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/`);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    this.onState('connecting', 'Connecting…');
    socket.addEventListener('open', () => {
      this.raw({ type: 'hello', version: PROTOCOL_VERSION, name: this.name() });
    });
    socket.addEventListener('message', (event) => {
      if (!(event.data instanceof ArrayBuffer)) return;
      let message;
      try {
        message = decoder.decode(new Uint8Array(event.data));
      } catch (error) {
        console.warn('undecodable frame', error);
        return;
      }
      if (message === null || typeof message !== 'object' || typeof message.type !== 'string') return;
      this.dispatch(message);
    });
    socket.addEventListener('close', (event) => {
      this.failPending('the connection closed');
      if (this.stopped) {
        this.onState('closed', `Disconnected: ${event.reason || 'closed by the server'}.`);
        return;
      }
      this.onState('closed', `Reconnecting in ${Math.round(this.retryMs / 1000)} s…`);
      setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 15000);
    });
  }

  // Closes the socket and opens a new one at once (to say `hello` with a
  // new name).
  reconnect() {
    this.retryMs = 0;
    this.socket?.close();
  }

  dispatch(message) {
    if (message.type === 'welcome') {
      this.retryMs = 1000;
      this.onState('open', 'Live');
      this.onReady();
      return;
    }
    if (message.type === 'error' && FATAL.has(message.code)) {
      this.stopped = true;
    }
    const current = this.current;
    if (current && (current.answers.includes(message.type) || message.type === 'error')) {
      this.current = null;
      current.resolve(message);
      this.next();
      if (message.type !== 'error') this.onEvent(message);
      return;
    }
    this.onEvent(message);
  }

  raw(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(MessagePack.encode(message));
    }
  }

  // Sends `message` once the requests before it are answered; resolves
  // with the first message whose type is in `answers`, or an `error`.
  request(message, answers) {
    return new Promise((resolve) => {
      this.pending.push({ message, answers, resolve });
      if (!this.current) this.next();
    });
  }

  next() {
    const item = this.pending.shift();
    if (!item) return;
    this.current = item;
    this.raw(item.message);
  }

  failPending(why) {
    const all = this.current ? [this.current, ...this.pending] : this.pending;
    this.current = null;
    this.pending = [];
    for (const item of all) item.resolve({ type: 'error', code: 'disconnected', message: why });
  }
}

// Lower-case hex SHA-256 of `text`, or null where the browser keeps
// SubtleCrypto to secure contexts (plain HTTP to a host other than this
// machine).
export async function sha256Hex(text) {
  if (!globalThis.crypto || !crypto.subtle) return null;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
