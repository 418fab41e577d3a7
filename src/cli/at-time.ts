// `--at TIME` of a dry run: the instant a forecast judges the sweep at (docs/forecast.md).
// Guarantees:
// - parseAtTime is pure: "now" is the caller's; no fs, no environment but the time zone. atOption
//   is commander's parser of --at (judged at the moment the command line is read).
// - `+<duration>` is the configuration's own duration grammar (src/config/retain.ts
//   parseDurationSecs: `+90`, `+30m`, `+36h`, `+7d`), added to now.
// - An ISO 8601 date or date-time — `2026-12-09`, `2026-12-09T07:53`, `2026-12-09T07:53:00`,
//   with `.sss` and an offset (`Z`, `+01:00`, `-0500`) — is that instant; without an offset it
//   is local time (a date alone: local midnight). A local time that does not exist (the hour a
//   daylight-saving change skips) or a date that does not (02-30) is refused, never shifted.
// - The result is a whole number of ms, never before now (the forecast judges the tree as it is
//   now: what was there at a past instant is not known), never past 9999-12-31.
// - Every refusal is an AtTimeError whose message names the value and the accepted forms.
// - forecastClock is the sweep's injected clock (`runSweep({ now })`): it reads the instant at
//   its first call and runs on at the real pace, so step timings and the run's duration stay true.
import { InvalidArgumentError } from 'commander';
import { DurationError, parseDurationSecs } from '../config/retain.js';

export class AtTimeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AtTimeError';
  }
}

/** What --at accepts, in words (its help and every refusal say it). */
export const AT_FORMS =
  '+DURATION (+36h, +7d: the duration grammar of the configuration) or an ISO 8601 date or date-time (2026-12-09, 2026-12-09T07:53, 2026-12-09T07:53:00Z; local time without an offset)';

/** The last ms of 9999-12-31 UTC: what a four-digit year reaches, and what every time format here shows. */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

/** The instant `text` names, judged at `nowMs`. @throws AtTimeError */
export function parseAtTime(text: string, nowMs: number): number {
  const at = text.startsWith('+') ? relative(text, nowMs) : absolute(text);
  if (at > LAST_MS) throw new AtTimeError(`'${text}' is after 9999-12-31`);
  if (at < nowMs)
    throw new AtTimeError(
      `'${text}' is in the past: a forecast judges the tree as it is now, and what it held then is not known (a dry run without --at shows now)`,
    );
  return at;
}

function relative(text: string, nowMs: number): number {
  try {
    return nowMs + parseDurationSecs(text.slice(1)) * 1000;
  } catch (err) {
    if (err instanceof DurationError)
      throw new AtTimeError(
        `'${text}': after '+' comes a duration: a whole number, optionally suffixed s, m, h or d (+36h, +7d)`,
      );
    throw err;
  }
}

function absolute(text: string): number {
  const m = ISO.exec(text);
  if (!m) {
    const hint = /^\d+[smhd]?$/.test(text) ? ` (a duration from now takes a '+': +${text})` : '';
    throw new AtTimeError(`'${text}' is not a time: give ${AT_FORMS}${hint}`);
  }
  const [y, mo, d, h = 0, mi = 0, s = 0] = m.slice(1, 7).map((x) => (x === undefined ? undefined : Number(x))) as [
    number,
    number,
    number,
    number?,
    number?,
    number?,
  ];
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  const zone = m[8];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59)
    throw new AtTimeError(`'${text}' names no date or time of the calendar`);
  if (zone !== undefined) {
    const off = zone === 'Z' || zone === 'z' ? 0 : offsetMinutes(zone, text);
    return Date.UTC(y, mo - 1, d, h, mi, s, ms) - off * 60_000;
  }
  const local = new Date(y, mo - 1, d, h, mi, s, ms);
  // (a local time a daylight-saving change skips comes back shifted: refused, never moved)
  if (
    local.getFullYear() !== y ||
    local.getMonth() !== mo - 1 ||
    local.getDate() !== d ||
    local.getHours() !== h ||
    local.getMinutes() !== mi
  ) {
    throw new AtTimeError(
      `'${text}' does not exist in the local time zone (a daylight-saving change skips it); give an offset (${text}+01:00) or another time`,
    );
  }
  return local.getTime();
}

function offsetMinutes(zone: string, text: string): number {
  const digits = zone.slice(1).replace(':', '');
  const hh = Number(digits.slice(0, 2));
  const mm = Number(digits.slice(2));
  if (hh > 23 || mm > 59) throw new AtTimeError(`'${text}': the offset ${zone} is not one`);
  return (zone.startsWith('-') ? -1 : 1) * (hh * 60 + mm);
}

function daysIn(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo, 0)).getUTCDate();
}

/** The sweep's clock for a forecast at `atMs` (see the header). */
export function forecastClock(atMs: number, pace: () => number = () => performance.now()): () => number {
  let t0: number | undefined;
  return () => {
    const t = pace();
    t0 ??= t;
    return atMs + Math.floor(t - t0);
  };
}

/** commander's parser of `--at`: the instant, judged now; a refusal is a usage error (exit 2). */
export function atOption(value: string): number {
  try {
    return parseAtTime(value, Date.now());
  } catch (err) {
    if (err instanceof AtTimeError) throw new InvalidArgumentError(err.message);
    throw err;
  }
}
