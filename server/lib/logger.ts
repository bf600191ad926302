/**
 * Structured logs on pino: one JSON object per line on stdout, with `time`
 * (ISO 8601), `level` (debug, info, warn, error) and `message`. The rest of
 * the code sees only the small `Logger` interface below; any field that holds
 * an Error is written with pino's error serialiser (type, message, stack,
 * cause), so a stack is never lost to `String(error)`.
 */
import { pino, stdSerializers, type DestinationStream, type Logger as PinoInstance, type LoggerOptions } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
type WrittenLevel = Exclude<LogLevel, 'silent'>;
export type LogFields = Record<string, unknown>;

export interface Logger {
  /** Whether messages of this level are written; lets callers skip building them. */
  enabled(level: WrittenLevel): boolean;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * pino's isoTime (`,"time":"<ISO 8601>"`), made once per millisecond rather than once per line: a busy server writes
 * several request lines within one millisecond, and Date's toISOString was a tenth of a line's cost (issue 32). The
 * same text, to the millisecond, as isoTime writes.
 */
let timeMs = Number.NaN;
let timeField = '';
export function isoTimeField(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeField;
}

const options: LoggerOptions = {
  messageKey: 'message',
  timestamp: isoTimeField,
  formatters: { level: (label) => ({ level: label }) },
  // `err` is pino's own key for errors; serialiseErrors below takes every other field holding one.
  serializers: { err: stdSerializers.err },
};

let stdout: DestinationStream | undefined;
/**
 * stdout, written asynchronously in batches (one write per request line
 * would cost each request a system call); pino flushes what is pending
 * when the process exits. One per process, shared by every logger.
 */
function stdoutDestination(): DestinationStream {
  // minLength: lines gather up to 4 KiB before a write, so a busy server makes one system call per few dozen lines,
  // not one per request (which cost a tenth of small reads' throughput).
  return (stdout ??= pino.destination({ dest: 1, sync: false, minLength: 4096 }));
}

/** A `Logger` over a pino instance; `pino` is there for child loggers. */
export class PinoLogger implements Logger {
  readonly pino: PinoInstance;

  constructor(pino: PinoInstance) {
    this.pino = pino;
  }

  enabled(level: WrittenLevel): boolean {
    return this.pino.isLevelEnabled(level);
  }
  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  /** A logger whose every line carries these fields. */
  child(bindings: LogFields): PinoLogger {
    return new PinoLogger(this.pino.child(serialiseErrors(bindings)));
  }

  private write(level: WrittenLevel, message: string, fields: LogFields | undefined): void {
    if (!this.pino.isLevelEnabled(level)) return;
    if (fields) this.pino[level](serialiseErrors(fields), message);
    else this.pino[level](message);
  }
}

/**
 * Every field holding an Error, whatever its name (`error`, `cause`, …), goes
 * through pino's error serialiser; `err` is left to pino, which serialises it
 * itself (twice would turn it into a plain object).
 */
function serialiseErrors(fields: LogFields): LogFields {
  let copy: LogFields | undefined;
  // for…in, not Object.entries: every log line passes here, and most hold no Error, so nothing is allocated for them.
  for (const name in fields) {
    const value = fields[name];
    if (name !== 'err' && value instanceof Error) (copy ??= { ...fields })[name] = stdSerializers.err(value);
  }
  return copy ?? fields;
}

export function createLogger(level: LogLevel, destination: DestinationStream = stdoutDestination()): PinoLogger {
  return new PinoLogger(pino({ ...options, level }, destination));
}

let fallback: PinoLogger | undefined;
/**
 * For code opened without a logger of its own (a store opened by the admin
 * CLI): info and above on stderr, written at once. Not stdout, which the CLI
 * answers on (TOKEN=$(npm run --silent admin -- token create …)).
 */
export function defaultLogger(): PinoLogger {
  return (fallback ??= createLogger('info', pino.destination({ dest: 2, sync: true })));
}
