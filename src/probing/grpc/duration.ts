/**
 * Go's time.Duration String(), for messages that quote a timeout the way the
 * kubelet prints it (`%v` of a Duration): 500ms, 1s, 1.5s, 2m0s, 1h0m0s.
 * Input is milliseconds (fractions allowed, rounded to whole nanoseconds).
 */
export function formatGoDuration(ms: number): string {
  const ns = Math.round(Math.abs(ms) * 1e6);
  const sign = ms < 0 && ns > 0 ? '-' : '';
  if (ns === 0) return '0s';
  if (ns < 1e9) return sign + subSecond(ns);
  const hours = Math.floor(ns / 3.6e12);
  const minutes = Math.floor((ns % 3.6e12) / 6e10);
  const seconds = `${fraction(ns % 6e10, 9)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return sign + seconds;
}

/** Below one second Go picks the largest unit that keeps an integer part: ns, µs or ms. */
function subSecond(ns: number): string {
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${fraction(ns, 3)}µs`;
  return `${fraction(ns, 6)}ms`;
}

/** `value / 10^digits` with trailing zeros (and a bare point) dropped, as Go's fmtFrac does. */
function fraction(value: number, digits: number): string {
  const scale = 10 ** digits;
  const whole = Math.floor(value / scale);
  const rest = String(value % scale).padStart(digits, '0').replace(/0+$/, '');
  return rest === '' ? String(whole) : `${whole}.${rest}`;
}
