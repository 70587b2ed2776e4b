/**
 * Go's time.Duration String() for the durations probes use (whole
 * milliseconds): 500ms, 1s, 1.5s, 2m0s, 1h0m0s, 1h1m1.5s.
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const sec = `${Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${sec}`;
  if (minutes > 0) return `${minutes}m${sec}`;
  return sec;
}
