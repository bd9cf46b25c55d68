import type { MouseEvent } from 'react';

import { hrefFor, PAGES, type PageId } from '../routes';

/**
 * The pages as links, for when the dashboard runs outside the admin (whose own sidebar shows
 * App Bridge's menu otherwise). The current page is marked by weight and an underline, and by
 * `aria-current` for screen readers, not by colour alone.
 */
export function TopNav({
  current,
  onNavigate,
}: {
  current: PageId;
  onNavigate: (page: PageId) => (e: MouseEvent<HTMLAnchorElement>) => void;
}) {
  return (
    <nav className="vd-nav" aria-label="videoapp">
      <span className="vd-nav__brand">videoapp</span>
      <ul className="vd-nav__list">
        {PAGES.map((p) => (
          <li key={p.id}>
            <a
              className="vd-nav__link"
              href={hrefFor(p.id)}
              aria-current={p.id === current ? 'page' : undefined}
              onClick={onNavigate(p.id)}
            >
              {p.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
