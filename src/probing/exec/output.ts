/**
 * What of an exec probe's output may leave the controller. The command runs
 * with the controller's identity inside a pod whose owner is trusted with
 * nothing, and its output can carry anything the container can read (a
 * mounted service-account token, a secret file). Events, pod conditions and
 * logs are readable by far more people than the pod's exec right, so by
 * default they only learn the size; the installer may opt in to the text,
 * sanitised and cut short.
 */

/** Characters of published exec output at most (the Event note limit is 1024). */
export const maxPublishedExecOutput = 512;

/** The text that stands for exec output that is not published. */
export function withheldExecOutput(bytes: number): string {
  return `exec probe output withheld (${bytes} bytes)`;
}

// C0 and C1 controls, DEL, and the Unicode bidirectional overrides/isolates,
// which can make a log line or an Event read as something else.
// eslint-disable-next-line no-control-regex
const unsafe = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g;

/** Control characters replaced by one space each run, trimmed, cut to `max` characters. */
export function sanitizeOutput(text: string, max = maxPublishedExecOutput): string {
  const clean = text.replace(unsafe, ' ').trim();
  return clean.length <= max ? clean : `${clean.slice(0, max - 3)}...`;
}

/**
 * The output an exec Outcome carries: withheld unless `publish`, and then
 * sanitised and capped. `raw` is the (already 10 KiB-capped) stdout+stderr.
 */
export function execOutputText(raw: Buffer, publish: boolean): string {
  return publish ? sanitizeOutput(raw.toString('utf8')) : withheldExecOutput(raw.length);
}
