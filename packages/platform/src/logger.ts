import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** JSON logs on stdout, one line per event; `service` on every line. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['authorization', 'headers.authorization', 'token', 'secret'], censor: '[redacted]' },
  });
}
