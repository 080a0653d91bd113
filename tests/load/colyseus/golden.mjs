// Prints the frames Colyseus itself encodes for the `race` room, as hex, one
// `name hex` line each: the golden bytes pinned in ../colyseus.rs's tests.
// Run with `node golden.mjs` after `npm ci`; if a version bump changes a
// line, the Rust decoder must be checked against the new framing.
process.env.NODE_ENV = "production";
const { getMessageBytes, Protocol } = await import("@colyseus/core");

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const progress = {
  moves: 7,
  cards_home: 1,
  runs_home: 0,
  cards_uncovered: 0,
  stock_turned: 7,
  elapsed_ms: 3500,
};
const frames = {
  join: getMessageBytes[Protocol.JOIN_ROOM]("TOKEN123", "none"),
  error: getMessageBytes[Protocol.ERROR](4213, "every seat is taken"),
  ack: getMessageBytes.raw(Protocol.ROOM_DATA, "ack", { n: 7, seq: 12, progress }),
  progress: getMessageBytes.raw(Protocol.ROOM_DATA, "progress", {
    seq: 12,
    seat: 1,
    progress,
    text: null,
    board: null,
  }),
  // What a client sending plain maps (no msgpackr records) puts on the wire.
  move: getMessageBytes.raw(Protocol.ROOM_DATA, "move", { text: "t1 f", n: 7 }),
};
for (const [name, bytes] of Object.entries(frames)) {
  console.log(`${name} ${hex(bytes)}`);
}
