import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilent, Logger } from 'pino';

type LogLevel = Exclude<LevelWithSilent, 'silent'>;

/**
 * A request's logger, made on its first line. Fastify gives every request a pino child bound to its
 * request id, and making one costs more than many a request's own work; most requests log nothing at
 * the configured level (4xx are `info`, the request lines are `info`, production runs at `info` or
 * `warn`), so the child is made only when a line is actually written.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  private write(level: LogLevel, args: unknown[]): void {
    if (!(this.#child ?? this.parent).isLevelEnabled(level)) return;
    (this.real[level] as (...line: unknown[]) => void)(...args);
  }

  // Methods on the prototype, not per-instance closures: the point is to allocate little per request.
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request logger that becomes a pino child on its first line. */
export const lazyRequestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) =>
  // A route's own log level makes a child with a level of its own at once: nothing to save there.
  options.level === undefined
    ? new LazyRequestLogger(logger as Logger, bindings, options)
    : logger.child(bindings, options);
