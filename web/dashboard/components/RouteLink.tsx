/** A link to another screen of the dashboard: a plain click moves there in place, a modified one is the browser's. */
import type { ReactNode } from 'react';

import { useNavigation } from '../navigation';
import { hrefOf, isPlainClick, type Route } from '../routes';

export function RouteLink({ to, children, label }: { to: Route; children: ReactNode; label?: string }) {
  const { go } = useNavigation();
  return (
    <a
      className="vd-link"
      href={hrefOf(to)}
      aria-label={label}
      onClick={(e) => {
        if (!isPlainClick(e)) return;
        e.preventDefault();
        go(to);
      }}
    >
      {children}
    </a>
  );
}
