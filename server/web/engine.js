// The rules engine: `patience-shared` compiled to WebAssembly (the crate
// shared/wasm), the same rules, notation, natural move and hinter as the
// server and the terminal. The page never decides a rule itself: it asks
// the engine, one MessagePack map in and one out (docs/GUIDE.md, "The
// engine's questions").
//
// A classic script, not a module, so that the page and the hint worker
// (which loads it with importScripts) share it: it defines
// `globalThis.PatienceEngine`.

(function defineEngine(global) {
  const { encode, Decoder } = global.MessagePack;
  const decoder = new Decoder();

  class EngineError extends Error {}

  class Engine {
    // The compiled module, fetched from this server once; it is handed to
    // the worker, which instantiates its own copy.
    static compile() {
      return WebAssembly.compileStreaming(fetch('/engine.wasm'));
    }

    static async create(module) {
      const instance = await WebAssembly.instantiate(module, {});
      return new Engine(module, instance.exports);
    }

    constructor(module, exports) {
      this.module = module;
      this.exports = exports;
    }

    // Answers `request` (an object with `op`); throws EngineError with the
    // engine's reason if the engine refuses it. An engine that trapped (a
    // bug, which aborts) is replaced by a fresh instance.
    ask(request) {
      if (!this.exports) throw new EngineError('the engine is restarting; try again');
      try {
        return this.askOnce(request);
      } catch (error) {
        if (!(error instanceof WebAssembly.RuntimeError)) throw error;
        this.exports = null;
        WebAssembly.instantiate(this.module, {}).then((instance) => { this.exports = instance.exports; });
        throw new EngineError(`the engine stopped (${error.message}); try again`);
      }
    }

    askOnce(request) {
      // A revealed seed comes from the server as a BigInt (protocol.js).
      const bytes = encode(request, { useBigInt64: true });
      const at = this.exports.request_buffer(bytes.length);
      new Uint8Array(this.exports.memory.buffer, at, bytes.length).set(bytes);
      const length = this.exports.answer();
      const from = this.exports.answer_buffer();
      const answer = decoder.decode(new Uint8Array(this.exports.memory.buffer, from, length));
      if (answer.error !== undefined && answer.error !== null) throw new EngineError(answer.error);
      return answer.ok;
    }
  }

  // The solver's questions (hints, a proved deal) run in a Web Worker, so
  // that a long search never freezes the page; each has a positions
  // budget, and one left unanswered is abandoned with its worker after
  // `timeoutMs`.
  class Thinker {
    constructor(module, timeoutMs = 60000) {
      this.module = module;
      this.timeoutMs = timeoutMs;
      this.nextId = 1;
      this.waiting = new Map();
      this.start();
    }

    start() {
      this.worker = new Worker('/hint-worker.js');
      this.worker.addEventListener('message', (event) => {
        const { id, ok, error } = event.data;
        const waiter = this.waiting.get(id);
        if (!waiter) return;
        this.waiting.delete(id);
        clearTimeout(waiter.timer);
        if (error !== undefined) waiter.reject(new EngineError(error));
        else waiter.resolve(ok);
      });
      // A worker that failed (a trap in the engine) is replaced; what it
      // was asked fails.
      this.worker.addEventListener('error', (event) => {
        event.preventDefault();
        this.restart('the solver stopped');
      });
      this.worker.postMessage({ module: this.module });
    }

    restart(why) {
      this.worker.terminate();
      for (const waiter of this.waiting.values()) {
        clearTimeout(waiter.timer);
        waiter.reject(new EngineError(why));
      }
      this.waiting.clear();
      this.start();
    }

    ask(request) {
      const id = this.nextId;
      this.nextId += 1;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => this.restart('the solver ran out of time'), this.timeoutMs);
        this.waiting.set(id, { resolve, reject, timer });
        this.worker.postMessage({ id, request });
      });
    }
  }

  global.PatienceEngine = { Engine, EngineError, Thinker };
}(globalThis));
