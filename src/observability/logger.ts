import winston from 'winston';
import type { Clock } from '../kernel/index.ts';
import { systemClock } from '../kernel/index.ts';

export const logLevels = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof logLevels)[number];

/** Structured context for one line. Values are bounded before they are written. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The logging seam. Domain code depends on this interface only, never on
 * winston, so a test can pass a recording fake and the wiring can swap sinks.
 */
export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (a call's own fields win). */
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** Lines below this level are dropped. */
  readonly level: LogLevel;
  /** Where JSON lines go. @default process.stdout */
  readonly stream?: NodeJS.WritableStream;
  /** Source of the `time` field. @default systemClock */
  readonly clock?: Clock;
}

/**
 * Limits that keep one line small whatever a caller hands in: a stack of
 * nested objects or a megabyte response body must not become a megabyte log
 * line, and a cyclic object must not throw.
 */
const maxFields = 32;
const maxStringChars = 2048;
const maxArrayItems = 20;
const maxDepth = 3;
const reservedKeys: ReadonlySet<string> = new Set(['time', 'level', 'msg']);

/** triple-beam's MESSAGE symbol: the string winston transports write. */
const MESSAGE = Symbol.for('message');
const FIELDS = Symbol.for('outprobe.fields');
const TIME = Symbol.for('outprobe.time');

interface LogInfo {
  level: string;
  message: unknown;
  [MESSAGE]?: string;
  [FIELDS]?: Record<string, unknown>;
  [TIME]?: number;
}

/** One JSON object per line: `{"time","level","msg",...fields}`. */
const jsonLine = winston.format((info) => {
  const i = info as unknown as LogInfo;
  const line = { time: new Date(i[TIME] ?? 0).toISOString(), level: i.level, msg: String(i.message), ...i[FIELDS] };
  i[MESSAGE] = JSON.stringify(line);
  return info;
});

/** Structured JSON-lines logger backed by winston. */
export function createLogger(options: LoggerOptions): Logger {
  const w = winston.createLogger({
    level: options.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    format: jsonLine(),
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- winston types its transports as interfaces with construct signatures, not classes
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stdout })],
    exitOnError: false,
  });
  const clock = options.clock ?? systemClock;
  const emit = (level: LogLevel, base: Record<string, unknown>, msg: string, fields: LogFields | undefined): void => {
    if (!w.isLevelEnabled(level)) return;
    const merged = fields === undefined ? base : { ...base, ...boundFields(fields) };
    w.log({ level, message: msg, [FIELDS]: merged, [TIME]: clock.now() } as unknown as winston.LogEntry);
  };
  const make = (base: Record<string, unknown>): Logger => ({
    error: (msg, fields) => emit('error', base, msg, fields),
    warn: (msg, fields) => emit('warn', base, msg, fields),
    info: (msg, fields) => emit('info', base, msg, fields),
    debug: (msg, fields) => emit('debug', base, msg, fields),
    child: (fields) => make({ ...base, ...boundFields(fields) }),
  });
  return make({});
}

/** A logger that writes nothing (tests, and callers that do not care). */
export const silentLogger: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => silentLogger,
};

/**
 * Copies at most `maxFields` fields into JSON-safe, size-limited values.
 * Reserved keys (`time`, `level`, `msg`) are renamed with a leading `_` so
 * a field can never forge the line's own header.
 */
export function boundFields(fields: LogFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (n++ >= maxFields) {
      out['_truncatedFields'] = true;
      break;
    }
    out[reservedKeys.has(key) ? `_${key}` : key] = boundValue(value, 0);
  }
  return out;
}

function boundValue(value: unknown, depth: number): unknown {
  if (typeof value === 'object') return boundObject(value, depth);
  switch (typeof value) {
    case 'string':
      return truncate(value);
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
    case 'symbol':
    case 'function':
      return truncate(String(value));
    default:
      return null;
  }
}

function boundObject(value: object | null, depth: number): unknown {
  if (value === null) return null;
  if (value instanceof Error) return boundError(value, depth);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (depth >= maxDepth) return '[object]';
  if (Array.isArray(value)) {
    const items = value.slice(0, maxArrayItems).map((v: unknown) => boundValue(v, depth + 1));
    if (value.length > maxArrayItems) items.push(`…${value.length - maxArrayItems} more`);
    return items;
  }
  // No prototype: a key such as __proto__ in a logged object (JSON.parse
  // makes it an own key) is copied like any other instead of being dropped.
  const out = Object.create(null) as Record<string, unknown>;
  let n = 0;
  for (const [k, v] of Object.entries(value)) {
    if (n++ >= maxFields) break;
    out[k] = boundValue(v, depth + 1);
  }
  return out;
}

/** Errors keep their name, message, stable `code` and `cause`, not their stack. */
function boundError(err: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: truncate(err.message) };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out['code'] = code;
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number') out['status'] = status;
  if (err.cause !== undefined && depth < maxDepth) out['cause'] = boundValue(err.cause, depth + 1);
  return out;
}

function truncate(s: string): string {
  return s.length <= maxStringChars ? s : `${s.slice(0, maxStringChars)}…(${s.length - maxStringChars} more chars)`;
}
