// A Colyseus 0.16 server with one room type, `race`, that does the race
// server's fan-out without any rules: the baseline `patience-load` drives
// side by side with patience-server (issue #13, item 3).
//
// Usage: node server.mjs [--port N] [--host ADDR]   (or PORT / HOST in the
// environment; port 0 picks a free one). Once listening it prints one line,
// `listening HOST:PORT`, with the port it bound.
//
// The room, per move from a player:
//   - to the mover, an `ack` message echoing the move's `n`;
//   - to every other client (rivals and spectators), one `progress` message
//     of about 100 bytes of MessagePack shaped like patience-server's
//     `progress` frame (seq, seat, the seat's counters; text and board null).
// The counters are plain counters: no deal, no rules, no validation of the
// move's text. It is the cheapest server that can answer the generator the
// way patience-server does, so the comparison shows what Colyseus costs per
// delivered frame.
//
// Why messages and not schema state sync: patience-server sends one message
// per event to each recipient, encoded once per audience. Colyseus's state
// sync would instead batch changes into patches on a timer (the patch rate,
// 20 per second by default), which measures a different thing (latency
// floored by the patch interval, frames per tick not per move). `send` and
// `broadcast(..., { except })` encode once and write at once, like ours.

// Colyseus and its dependencies read NODE_ENV (the protocol encoder keeps a
// development-only buffer reset, `debug` checks it); a deployment runs in
// production, so that is the default here. It must be set before the
// modules load, hence the dynamic imports below.
process.env.NODE_ENV ??= "production";

const { Room, Server, ServerError, ErrorCode } = await import("@colyseus/core");
const { WebSocketTransport } = await import("@colyseus/ws-transport");

/** Reads `--name value` from the command line, else the environment. */
function setting(name, environmentName, fallback) {
  const flag = `--${name}`;
  const index = process.argv.indexOf(flag);
  if (index !== -1) {
    const value = process.argv[index + 1];
    if (value === undefined) {
      throw new Error(`${flag} needs a value`);
    }
    return value;
  }
  return process.env[environmentName] ?? fallback;
}

/** An integer option a client sent, within bounds, or a matchmaking error. */
function countOption(options, name, min, max) {
  const value = options?.[name];
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ServerError(
      ErrorCode.MATCHMAKE_UNHANDLED,
      `option "${name}" must be an integer from ${min} to ${max}`,
    );
  }
  return value;
}

class RaceRoom extends Room {
  /**
   * `options` are the creating client's: `players` (1..8) and `spectators`
   * (0..64). Joiners say `role: "player"` or `role: "spectator"`.
   */
  onCreate(options) {
    this.players = countOption(options, "players", 1, 8);
    this.spectators = countOption(options, "spectators", 0, 64);
    this.maxClients = this.players + this.spectators;
    this.seatsTaken = 0;
    this.spectatorsJoined = 0;
    // Room event number, as patience-server numbers its room events.
    this.seq = 0;
    this.startedAt = Date.now();
    this.progressBySeat = [];
    // No state, so no patch loop: nothing should tick between moves.
    this.patchRate = null;

    this.onMessage("move", (client, message) => this.onMove(client, message));
  }

  onJoin(client, options) {
    const role = options?.role;
    if (role === "player") {
      if (this.seatsTaken >= this.players) {
        throw new ServerError(ErrorCode.MATCHMAKE_UNHANDLED, "every seat is taken");
      }
      const seat = this.seatsTaken++;
      client.userData = { seat };
      this.progressBySeat[seat] = {
        moves: 0,
        cards_home: 0,
        runs_home: 0,
        cards_uncovered: 0,
        stock_turned: 0,
        elapsed_ms: 0,
      };
    } else if (role === "spectator") {
      if (this.spectatorsJoined >= this.spectators) {
        throw new ServerError(ErrorCode.MATCHMAKE_UNHANDLED, "no spectator place left");
      }
      this.spectatorsJoined++;
      client.userData = { seat: undefined };
    } else {
      throw new ServerError(ErrorCode.MATCHMAKE_UNHANDLED, 'role must be "player" or "spectator"');
    }
  }

  /**
   * A player's move `{ text, n }`: counted, acked, fanned out. A move from a
   * spectator, or one without a numeric `n`, is dropped: there is no rule to
   * reject it by, and the generator never sends one.
   */
  onMove(client, message) {
    const seat = client.userData?.seat;
    if (seat === undefined || typeof message?.n !== "number") {
      return;
    }
    const progress = this.progressBySeat[seat];
    progress.moves += 1;
    // Stand-ins for the rules' counters, so the frame carries the same
    // fields with plausible sizes; nothing reads their meaning.
    progress.cards_home = Math.min(52, progress.moves >> 2);
    progress.cards_uncovered = Math.min(21, progress.moves >> 3);
    progress.stock_turned = progress.moves % 32;
    progress.elapsed_ms = Date.now() - this.startedAt;
    this.seq += 1;

    client.send("ack", { n: message.n, seq: this.seq, progress });
    this.broadcast(
      "progress",
      { seq: this.seq, seat, progress, text: null, board: null },
      { except: client },
    );
  }
}

const host = setting("host", "HOST", "127.0.0.1");
const port = Number(setting("port", "PORT", "2567"));
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  throw new Error(`bad port: ${port}`);
}

const transport = new WebSocketTransport();
const gameServer = new Server({ transport, greet: false });
gameServer.define("race", RaceRoom);
await gameServer.listen(port, host);
const bound = transport.server.address();
console.log(`listening ${bound.address}:${bound.port}`);
