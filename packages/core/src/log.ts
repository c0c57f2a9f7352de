/**
 * Structured logging: one JSON object per line on stdout (pino), so a log pipeline can index
 * `controller`, `key`, `err` without parsing prose.
 *
 * Guarantees: `createLogger` never throws on an unknown level (it falls back to `info`), and
 * `LOG_LEVEL` in the environment overrides the default without a code change.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

/** pino's logger: what every podlife component logs through. */
export type { Logger };

const levels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Level and destination of a logger. */
export interface LoggerOptions {
  /** fatal | error | warn | info | debug | trace | silent; default `LOG_LEVEL` or `info`. */
  level?: string;
  /** Where lines go; default stdout. Tests pass a stream to capture output. */
  destination?: DestinationStream;
}

/** A JSON logger named `name`, at `opts.level`, else `LOG_LEVEL`, else info. */
export function createLogger(name: string, opts: LoggerOptions = {}): Logger {
  const wanted = opts.level ?? process.env['LOG_LEVEL'] ?? 'info';
  const level = levels.has(wanted) ? wanted : 'info';
  const options = { name, level, base: { name } };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** A logger that writes nothing: the default for library objects built without one. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
