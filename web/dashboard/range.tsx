/**
 * The analytics range the merchant chose, one for the whole dashboard: a video's page opened
 * from Analytics shows the same days, and Analytics shows the days last chosen on a video's page.
 */
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';

import { useShop } from './context';
import { presetRange, rangeErrors, type DateRange, type Preset } from './dates';
import { HOME_PRESET } from './home';

interface Choice {
  preset: Preset;
  /** The two dates as typed, complete or not. */
  custom: DateRange;
  /** The last complete custom range: half-typed dates never reach the API. */
  applied: DateRange;
}

const RangeContext = createContext<{ choice: Choice; setChoice: (update: (c: Choice) => Choice) => void } | null>(null);

export function RangeProvider({ children }: { children: ReactNode }) {
  const { shop } = useShop();
  const [choice, setChoice] = useState<Choice>(() => {
    const home = presetRange(HOME_PRESET, shop.timezone);
    return { preset: HOME_PRESET, custom: home, applied: home };
  });
  const value = useMemo(() => ({ choice, setChoice }), [choice]);
  return <RangeContext.Provider value={value}>{children}</RangeContext.Provider>;
}

/** The range shown, and the props of the {@link RangePicker} that changes it. */
export function useRange() {
  const { shop } = useShop();
  const timeZone = shop.timezone;
  const context = useContext(RangeContext);
  if (!context) throw new Error('useRange outside the RangeProvider');
  const { choice, setChoice } = context;
  const { preset, custom, applied } = choice;
  const range = useMemo(() => (preset === 'custom' ? applied : presetRange(preset, timeZone)), [preset, applied, timeZone]);

  const onPreset = useCallback(
    (next: Preset) =>
      setChoice((c) => {
        // "Custom" starts from the range shown.
        if (next !== 'custom') return { ...c, preset: next };
        const shown = c.preset === 'custom' ? c.applied : presetRange(c.preset, timeZone);
        return { preset: next, custom: shown, applied: shown };
      }),
    [setChoice, timeZone],
  );
  const onCustom = useCallback(
    (next: DateRange) =>
      setChoice((c) => {
        const errors = rangeErrors(next);
        return { ...c, custom: next, applied: !errors.start && !errors.end ? next : c.applied };
      }),
    [setChoice],
  );

  return { range, picker: { preset, custom, range, timeZone, onPreset, onCustom } };
}
