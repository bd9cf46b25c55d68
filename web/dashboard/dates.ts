/**
 * Calendar days in the shop's timezone, as `YYYY-MM-DD` strings. The analytics API counts whole
 * local days of the shop, so "today" is the shop's today, not the browser's.
 */

export type Preset = 'today' | 'last7' | 'last30' | 'last90' | 'custom';

export interface DateRange {
  start: string;
  end: string;
}

export const PRESETS: { value: Preset; label: string; days: number }[] = [
  { value: 'today', label: 'Today', days: 1 },
  { value: 'last7', label: 'Last 7 days', days: 7 },
  { value: 'last30', label: 'Last 30 days', days: 30 },
  { value: 'last90', label: 'Last 90 days', days: 90 },
  { value: 'custom', label: 'Custom', days: 0 },
];

/** The API refuses longer ranges (INVALID_DATE_RANGE). */
export const MAX_RANGE_DAYS = 1096;

const DAY_MS = 86_400_000;
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The calendar day that `instant` falls on in `timeZone`. */
export function dayIn(timeZone: string, instant: Date = new Date()): string {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  } catch {
    // An unknown zone name: UTC is the service's default too.
    parts = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  }
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year').padStart(4, '0')}-${get('month')}-${get('day')}`;
}

/** Milliseconds of the day's UTC midnight, or NaN when `day` is not a real date. */
function epoch(day: string): number {
  const m = ISO_DAY.exec(day);
  if (!m) return NaN;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  // Date.UTC rolls 2025-02-30 over into March; a real date survives the round trip.
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : NaN;
}

export const isDay = (day: string): boolean => !Number.isNaN(epoch(day));

const fromEpoch = (t: number): string => new Date(t).toISOString().slice(0, 10);

export const addDays = (day: string, n: number): string => fromEpoch(epoch(day) + n * DAY_MS);

/** Days from `start` to `end`, both included (0 or less when `end` is before `start`). */
export const daysIn = (range: DateRange): number => Math.round((epoch(range.end) - epoch(range.start)) / DAY_MS) + 1;

/** A preset's range: the last N days ending today (inclusive), in `timeZone`. */
export function presetRange(preset: Exclude<Preset, 'custom'>, timeZone: string, now: Date = new Date()): DateRange {
  const end = dayIn(timeZone, now);
  const days = PRESETS.find((p) => p.value === preset)?.days ?? 1;
  return { start: addDays(end, -(days - 1)), end };
}

/** What is wrong with a custom range, per field; empty when it can be asked for. */
export function rangeErrors(range: DateRange): { start?: string; end?: string } {
  const errors: { start?: string; end?: string } = {};
  if (!isDay(range.start)) errors.start = 'Enter a date as YYYY-MM-DD';
  if (!isDay(range.end)) errors.end = 'Enter a date as YYYY-MM-DD';
  if (errors.start || errors.end) return errors;
  if (range.end < range.start) errors.end = 'The end date must be on or after the start date';
  else if (daysIn(range) > MAX_RANGE_DAYS) errors.end = `A range can cover at most ${MAX_RANGE_DAYS} days`;
  return errors;
}

/** "Oct 22, 2026": a calendar day, whatever the browser's zone. */
export function formatDay(day: string, style: 'short' | 'medium' = 'medium'): string {
  const t = epoch(day);
  if (Number.isNaN(t)) return day;
  const opts: Intl.DateTimeFormatOptions =
    style === 'short'
      ? { month: 'short', day: 'numeric', timeZone: 'UTC' }
      : { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' };
  return new Intl.DateTimeFormat('en-US', opts).format(new Date(t));
}

/** An instant (ISO 8601) as a date and time (or the date alone) in the shop's zone. */
export function formatInstant(iso: string, timeZone: string, { time = true } = {}): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const opts: Intl.DateTimeFormatOptions = time ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'medium' };
  try {
    return new Intl.DateTimeFormat('en-US', { ...opts, timeZone }).format(new Date(t));
  } catch {
    return new Intl.DateTimeFormat('en-US', { ...opts, timeZone: 'UTC' }).format(new Date(t));
  }
}
