/**
 * How far shoppers watched: for each point of the video (a quarter, halfway, three quarters, the
 * end), how many openings reached it and their share of all openings. A table, so that a screen
 * reader reads the numbers; the bars in it only draw the shares it writes out.
 */
import { Text } from '@shopify/polaris';

import { formatCount, formatShare } from '../format';
import type { Metrics } from '../types';

type Reached = Metrics['reached'];

const POINTS: { key: keyof Reached; label: string }[] = [
  { key: 'p25', label: 'A quarter of the video' },
  { key: 'p50', label: 'Halfway' },
  { key: 'p75', label: 'Three quarters' },
  { key: 'p100', label: 'The end' },
];

export function ReachedChart({ reached, openings }: { reached: Reached; openings: number }) {
  return (
    <div className="vd-reached">
      <table>
        <caption className="vd-visually-hidden">How far shoppers watched, of {formatCount(openings)} openings</caption>
        <thead>
          <tr>
            <th scope="col">Reached</th>
            <th scope="col" className="vd-reached__count">
              Openings
            </th>
            <th scope="col" className="vd-reached__share-head">
              Share of openings
            </th>
          </tr>
        </thead>
        <tbody>
          {POINTS.map(({ key, label }) => {
            const count = reached[key];
            const width = openings > 0 ? Math.min(100, (count / openings) * 100) : 0;
            return (
              <tr key={key} data-testid={`reached-${key}`} data-value={String(count)}>
                <th scope="row">
                  <Text as="span">{label}</Text>
                </th>
                <td className="vd-reached__count">
                  <Text as="span" numeric>
                    {formatCount(count)}
                  </Text>
                </td>
                <td>
                  <div className="vd-reached__share">
                    <span className="vd-reached__bar" aria-hidden="true">
                      <span style={{ width: `${width}%` }} />
                    </span>
                    <Text as="span" numeric>
                      {formatShare(count, openings)}
                    </Text>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
