/**
 * Moving between the dashboard's screens: each one has its URL (see routes.ts), pushed to the
 * browser's history. An editor holding unsaved changes is not left without a question — not by
 * the navigation, not by Back or Forward, not by a reload or by closing the window.
 */
import { Modal, Text } from '@shopify/polaris';
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';

import { currentRoute, hrefOf, type Route } from './routes';

export interface GoOptions {
  /** Leave without asking: the editor's changes were just saved. */
  saved?: boolean;
  /** Open the page afresh even when it is the one shown ("Widgets" in the menu from a widget's form). */
  fresh?: boolean;
}

export interface Navigation {
  route: Route;
  go: (route: Route, options?: GoOptions) => void;
  /** An editor tells whether it holds changes that are not saved. */
  setUnsaved: (unsaved: boolean) => void;
}

export const NavigationContext = createContext<Navigation>({
  route: { page: 'analytics' },
  go: () => {},
  setUnsaved: () => {},
});

export const useNavigation = (): Navigation => useContext(NavigationContext);

/** Marks the screen as holding unsaved changes while `unsaved` is true, and no longer once it closes. */
export function useUnsavedChanges(unsaved: boolean): void {
  const { setUnsaved } = useNavigation();
  useEffect(() => setUnsaved(unsaved), [unsaved, setUnsaved]);
  useEffect(() => () => setUnsaved(false), [setUnsaved]);
}

interface Pending {
  route: Route;
  fresh: boolean;
  /** Back or Forward: the browser had moved already, and the editor's URL was put back. */
  fromHistory: boolean;
}

/**
 * The shell's side: the route shown, a `visit` that changes whenever a page is to open afresh
 * (the key of the page's component), and the question asked before changes are thrown away.
 */
export function useRouter(): { navigation: Navigation; visit: number; question: JSX.Element } {
  const [route, setRoute] = useState<Route>(() => currentRoute());
  const [visit, setVisit] = useState(0);
  const [pending, setPending] = useState<Pending | null>(null);
  const shown = useRef(route);
  const unsaved = useRef(false);

  const show = useCallback((next: Route, fresh: boolean) => {
    if (fresh || shown.current.page !== next.page) setVisit((v) => v + 1);
    shown.current = next;
    setRoute(next);
  }, []);

  const push = useCallback(
    (next: Route, fresh: boolean) => {
      const href = hrefOf(next);
      if (href !== location.pathname + location.search) history.pushState(null, '', href);
      show(next, fresh);
      window.scrollTo(0, 0);
    },
    [show],
  );

  const go = useCallback(
    (next: Route, options?: GoOptions) => {
      const fresh = !!options?.fresh;
      if (unsaved.current && !options?.saved) {
        setPending({ route: next, fresh, fromHistory: false });
        return;
      }
      unsaved.current = false;
      push(next, fresh);
    },
    [push],
  );

  const setUnsaved = useCallback((value: boolean) => {
    unsaved.current = value;
  }, []);

  useEffect(() => {
    const onPop = () => {
      const next = currentRoute();
      if (unsaved.current) {
        // The browser has moved already: the editor's URL goes back on top, one step after the
        // screen asked for, so that discarding is one step back.
        history.pushState(null, '', hrefOf(shown.current));
        setPending({ route: next, fresh: false, fromHistory: true });
        return;
      }
      show(next, false);
    };
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (!unsaved.current) return;
      e.preventDefault();
      // Older browsers ask only when a return value is set.
      e.returnValue = '';
    };
    window.addEventListener('popstate', onPop);
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => {
      window.removeEventListener('popstate', onPop);
      window.removeEventListener('beforeunload', onBeforeUnload);
    };
  }, [show]);

  const discard = useCallback(() => {
    const p = pending;
    setPending(null);
    unsaved.current = false;
    if (!p) return;
    if (p.fromHistory) history.back();
    else push(p.route, p.fresh);
  }, [pending, push]);

  const navigation = useMemo(() => ({ route, go, setUnsaved }), [route, go, setUnsaved]);

  const question = (
    <Modal
      open={pending != null}
      onClose={() => setPending(null)}
      title="Leave without saving?"
      primaryAction={{ content: 'Discard changes', destructive: true, onAction: discard }}
      secondaryActions={[{ content: 'Keep editing', onAction: () => setPending(null) }]}
    >
      <Modal.Section>
        <Text as="p">Your changes have not been saved. If you leave now, they are lost.</Text>
      </Modal.Section>
    </Modal>
  );

  return { navigation, visit, question };
}
