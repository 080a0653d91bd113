// The hint worker: its own instance of the rules engine (engine.js), for
// the solver's questions (a hint, a proved deal), so that a search runs
// beside the page and never freezes it. The engine keeps its hinter's
// line between questions, so hints followed from one position stay on
// one winning line.

importScripts('/vendor/msgpack-3.1.3.min.js', '/engine.js');

let ready = null;

globalThis.addEventListener('message', async (event) => {
  const { id, module, request } = event.data;
  if (module) {
    ready = globalThis.PatienceEngine.Engine.create(module);
    return;
  }
  try {
    const engine = await ready;
    globalThis.postMessage({ id, ok: engine.ask(request) });
  } catch (error) {
    globalThis.postMessage({ id, error: String(error?.message ?? error) });
  }
});
