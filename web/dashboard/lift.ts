/**
 * What the shop's holdout shows, in sentences a merchant reads: figures in, sentences out, nothing
 * else (no React, no requests), so that every case can be checked on its own.
 *
 * The group shown the widgets is "shoppers who could see your videos", not "who saw" them: it is
 * every shopper not held out, also those who never came to a page with a widget. The held-out
 * group is "those who couldn't". The only word of statistics said is "95% confidence", and only
 * once both groups are large enough (`enough_data`) for the interval to mean it.
 */
import { formatCount } from './format';
import type { GroupMetrics, LiftData, LiftFigure } from './types';

/**
 * The service's floor for each group before `enough_data` (its `MIN_SESSIONS` and `MIN_ORDERS`),
 * said to the merchant as what is still needed; the API gives only the verdict, not the floor.
 */
export const MIN_VISITS = 1_000;
export const MIN_ORDERS = 50;

/**
 * - `off`: no holdout, and no held-out visit in the range: nothing to compare.
 * - `early`: a holdout, but a group is still short of visits or orders.
 * - `measured`: both groups are large enough for the verdict.
 */
export type LiftState = 'off' | 'early' | 'measured';

export interface LiftStory {
  state: LiftState;
  /** Said first: the holdout is off now, and the held-out figures are from before. */
  note: string | null;
  /** Whole sentences, in order: the verdict, or what there is so far and what is still needed. */
  sentences: string[];
  /** While `early`: the conversion lift so far, marked as early; null when there is none yet. */
  estimate: string | null;
}

/** The card's story for a shop with no holdout, when nothing was asked of the service. */
export const HOLDOUT_OFF: LiftStory = {
  state: 'off',
  note: null,
  sentences: [
    "A holdout shows what your videos really sell: a share of shoppers sees no video widget, and their orders are compared with everyone else's.",
  ],
  estimate: null,
};

const tenths = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const hundredths = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/**
 * The size of a lift in percent, "12.4%", whatever its sign: the words around it say which way.
 * A lift smaller than 0.05% keeps its second decimal rather than read "0.0%", which would say no
 * change where there is one.
 */
export function liftSize(percent: number): string {
  const size = Math.abs(percent);
  const text = tenths.format(size);
  return `${text === '0.0' && size > 0 ? hundredths.format(size) : text}%`;
}

/** One bound of an interval that spans no change: "4.0% less", "9.2% more", or "no change" at 0. */
const bound = (percent: number, less: string, more: string): string =>
  percent === 0 ? 'no change' : `${liftSize(percent)} ${percent < 0 ? less : more}`;

const visits = (n: number) => (n === 1 ? '1 visit' : `${formatCount(n)} visits`);
const orders = (n: number) => (n === 0 ? 'no orders' : n === 1 ? '1 order' : `${formatCount(n)} orders`);
const made = (g: GroupMetrics) => `made ${visits(g.sessions)} and ${orders(g.orders)}`;

/** The verdict on conversion: more often, less often, or not known yet, with the interval. */
export function conversionSentence({ value, ci_low, ci_high }: LiftFigure): string {
  if (ci_low > 0) {
    return `Shoppers who could see your videos converted ${liftSize(value)} more often than those who couldn't (95% confidence: between ${liftSize(ci_low)} and ${liftSize(ci_high)} more).`;
  }
  if (ci_high < 0) {
    return `Shoppers who could see your videos converted ${liftSize(value)} less often than those who couldn't (95% confidence: between ${liftSize(ci_high)} and ${liftSize(ci_low)} less).`;
  }
  return `We can't tell yet whether your videos change how often shoppers buy: those who could see them converted between ${bound(ci_low, 'less', 'more')} and ${bound(ci_high, 'less', 'more')} often than those who couldn't (95% confidence).`;
}

/** The verdict on revenue per visit, said the same way as conversion's. */
export function revenueSentence({ value, ci_low, ci_high }: LiftFigure): string {
  if (ci_low > 0) {
    return `Revenue per visit was ${liftSize(value)} higher for shoppers who could see your videos (95% confidence: between ${liftSize(ci_low)} and ${liftSize(ci_high)} higher).`;
  }
  if (ci_high < 0) {
    return `Revenue per visit was ${liftSize(value)} lower for shoppers who could see your videos (95% confidence: between ${liftSize(ci_high)} and ${liftSize(ci_low)} lower).`;
  }
  return `We can't tell yet whether your videos change revenue per visit: between ${bound(ci_low, 'lower', 'higher')} and ${bound(ci_high, 'lower', 'higher')} for shoppers who could see them (95% confidence).`;
}

/**
 * The conversion lift so far, without its interval: with groups this small the interval is not
 * the 95% it claims, so only the direction and size are said, marked as early.
 */
export function earlySentence({ value }: LiftFigure): string {
  const how = value === 0 ? 'as often as' : `${liftSize(value)} ${value > 0 ? 'more' : 'less'} often than`;
  return `Early estimate, likely to change: shoppers who could see your videos converted ${how} those who couldn't.`;
}

/** Each group's visits and orders so far. */
export function soFarSentence({ exposed, holdout }: Pick<LiftData, 'exposed' | 'holdout'>): string {
  if (exposed.sessions === 0 && holdout.sessions === 0) return 'No visits are counted in these dates yet.';
  if (holdout.sessions === 0) {
    return `So far, shoppers who could see your videos ${made(exposed)}; no held-out shopper has visited in these dates yet.`;
  }
  return `So far, shoppers who could see your videos ${made(exposed)}; held-out shoppers ${made(holdout)}.`;
}

/**
 * What the groups still lack. Visits and orders are nearly always what is missing; the service's
 * other conditions (visits without an order, revenue) are named only once those are met.
 */
export function neededSentence({ exposed, holdout }: Pick<LiftData, 'exposed' | 'holdout'>): string {
  const groups = [exposed, holdout];
  if (groups.some((g) => g.sessions < MIN_VISITS || g.orders < MIN_ORDERS)) {
    return `Each group needs at least ${visits(MIN_VISITS)} and ${orders(MIN_ORDERS)} before the comparison means something.`;
  }
  if (groups.some((g) => g.sessions - g.orders < MIN_ORDERS)) {
    return `Each group has enough visits and orders; it also needs at least ${visits(MIN_ORDERS)} without an order before the comparison means something.`;
  }
  return 'The comparison needs a little more data before it means something.';
}

/**
 * The card's story for the figures of a range. `holdoutPercent` is the shop's setting now: at 0
 * with held-out visits in the range, the holdout was on for part of it, and its figures still
 * answer for those days.
 */
export function liftStory(data: LiftData, holdoutPercent: number): LiftStory {
  if (holdoutPercent === 0 && data.holdout.sessions === 0) return HOLDOUT_OFF;
  const note =
    holdoutPercent === 0 ? 'Your holdout is off now, so no shopper is held out: the held-out figures are from the days it was on.' : null;
  const conversion = data.lift.conversion_rate ?? null;
  const revenue = data.lift.revenue_per_session ?? null;
  if (data.enough_data && conversion) {
    return {
      state: 'measured',
      note,
      sentences: [conversionSentence(conversion), ...(revenue ? [revenueSentence(revenue)] : [])],
      estimate: null,
    };
  }
  return {
    state: 'early',
    note,
    sentences: [soFarSentence(data), neededSentence(data)],
    estimate: conversion && data.holdout.sessions > 0 ? earlySentence(conversion) : null,
  };
}
