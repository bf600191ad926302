/** Structured logs: one JSON object per line on stdout. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  /** Whether messages of this level are written; lets callers skip building them. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Writes to stdout in batches. On Linux a write to a pipe or file is
 * synchronous, so one write per request line would cost every request a
 * system call; lines are gathered and written together once per turn of the
 * event loop (or at 64 KiB), as pino does. Pending lines are flushed on exit.
 */
export function bufferedStdout(): (line: string) => void {
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    size = 0;
    process.stdout.write(text);
  };
  process.once('exit', flush);
  return (line: string) => {
    pending.push(line + '\n');
    size += line.length + 1;
    if (size >= 65536) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

export function createLogger(level: LogLevel, write: (line: string) => void = bufferedStdout()): Logger {
  const log = (at: Exclude<LogLevel, 'silent'>) => (message: string, fields: Record<string, unknown> = {}) => {
    if (rank[at] < rank[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: at, message, ...fields }));
  };
  return { enabled: (at) => rank[at] >= rank[level], debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
