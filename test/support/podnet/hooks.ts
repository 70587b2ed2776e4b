// Clean-up when the creating process ends without destroy(): on 'exit' (normal end,
// process.exit, an uncaught exception) and on SIGINT/SIGTERM. A signal we alone listen
// for is re-raised after clean-up so the process still dies of it; when the program has
// its own handler, it decides when to exit (and its destroy() is then a no-op).
// SIGKILL cannot be caught: the next createPodNet/sweepStale removes that run's leftovers.
const cleanups = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const c of [...cleanups]) {
    cleanups.delete(c);
    try { c(); } catch { /* best effort at exit */ }
  }
}

function onSignal(sig: NodeJS.Signals): void {
  runAll();
  if (process.listenerCount(sig) > 1) return;
  process.removeListener(sig, onSignal);
  process.kill(process.pid, sig);
}

/** Registers a synchronous clean-up; returns the function that unregisters it. */
export function onProcessEnd(cleanup: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runAll);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  cleanups.add(cleanup);
  return () => { cleanups.delete(cleanup); };
}
