import { Cron } from 'croner';
import { AppError, errors } from '@workspace/platform';

/** A validated schedule expression: 5-field cron in an IANA time zone. */
export interface CronSpec {
  cron: string;
  timezone: string;
}

/** IANA names (`UTC`, `Europe/Berlin`, `Etc/GMT+5`); Intl alone would also take offsets like `+01:00`. */
const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * The zone as stored: the caller's spelling, with the canonical letter case when Intl knows the
 * name (`europe/berlin` → `Europe/Berlin`). Aliases are kept as given (`Etc/UTC` stays), so a
 * client reads back what it sent.
 */
export function parseTimezone(timezone: string): string {
  if (!IANA_SHAPE.test(timezone) || timezone.length > 64) throw errors.invalidArgument('timezone must be an IANA time zone name such as "UTC" or "Europe/Berlin"', 'timezone');
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw errors.invalidArgument(`unknown time zone "${timezone}"; use an IANA name such as "Europe/Berlin"`, 'timezone');
  }
  return resolved.toLowerCase() === timezone.toLowerCase() ? resolved : timezone;
}

export const INVALID_CRON =
  'cron: not a valid 5-field expression; the fields are minute (0–59), hour (0–23), day of month (1–31), month (1–12 or JAN–DEC) ' +
  'and day of week (0–7 or SUN–SAT), each *, a value, a range a-b, a list a,b or a step such as */15';

function compile(spec: CronSpec): Cron {
  // Paused: croner is only a calendar here; runs are claimed through Redis, never by its timers.
  // domAndDow false: day-of-month and day-of-week are OR-ed, as in Vixie cron.
  return new Cron(spec.cron, { timezone: spec.timezone, paused: true, mode: '5-part', domAndDow: false });
}

/**
 * Validates a schedule (docs/api/automations.md#cron): exactly five fields (minute hour
 * day-of-month month day-of-week; no seconds, years or `@daily` nicknames), an IANA zone, and at
 * least one future run. White space between fields is normalized to one space.
 */
export function parseCronSpec(cron: string, timezone: string, now: Date): CronSpec {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    throw errors.invalidArgument('cron must have 5 fields: minute hour day-of-month month day-of-week', 'cron');
  }
  const spec = { cron: fields.join(' '), timezone: parseTimezone(timezone) };
  let next: Date | null;
  try {
    next = compile(spec).nextRun(now);
  } catch (err) {
    // Our words, never croner's: its text is the library's, and it changes between versions.
    throw new AppError('INVALID_ARGUMENT', INVALID_CRON, { details: { field: 'cron' }, cause: err });
  }
  if (!next) throw errors.invalidArgument('cron expression never matches a date', 'cron');
  return spec;
}

/** The first run strictly after `after`, or null when there is none. */
export function nextRunAfter(spec: CronSpec, after: Date): Date | null {
  return compile(spec).nextRun(after);
}
