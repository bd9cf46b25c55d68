/**
 * A table's rows as stacked cards, for a phone: the row's name, its facts as label and value,
 * then its actions. A table of six or more columns cannot fit a phone without scrolling sideways.
 */
import { useBreakpoints } from '@shopify/polaris';
import type { ReactNode } from 'react';

export interface StackedRow {
  id: string;
  title: ReactNode;
  /** Beside the title: a thumbnail. */
  media?: ReactNode;
  facts: { label: string; value: ReactNode }[];
  actions?: ReactNode;
}

/** True on a phone-sized screen (Polaris' small breakpoint and below), where tables turn into cards. */
export const useCompact = (): boolean => useBreakpoints().smDown;

export function StackedRows({ label, rows }: { label: string; rows: StackedRow[] }) {
  return (
    <ul className="vd-stacked" aria-label={label}>
      {rows.map((row) => (
        <li key={row.id} className="vd-stacked__row">
          <div className="vd-stacked__head">
            {row.media}
            <div className="vd-stacked__title">{row.title}</div>
          </div>
          {row.facts.length > 0 && (
            <dl className="vd-stacked__facts">
              {row.facts.map((f) => (
                <div key={f.label} className="vd-stacked__fact">
                  <dt>{f.label}</dt>
                  <dd>{f.value}</dd>
                </div>
              ))}
            </dl>
          )}
          {row.actions && <div className="vd-stacked__actions">{row.actions}</div>}
        </li>
      ))}
    </ul>
  );
}
