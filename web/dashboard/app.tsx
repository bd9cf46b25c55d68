/** The dashboard's frame: the shop, the navigation between the four pages, and toasts. */
import { NavMenu } from '@shopify/app-bridge-react';
import { AppProvider, BlockStack, Button, Card, Frame, Page, Text } from '@shopify/polaris';
import en from '@shopify/polaris/locales/en.json';
import { useCallback, useEffect, useMemo, useState, type MouseEvent, type ReactNode } from 'react';

import { ApiError, get, shopPath } from './api';
import { Toasts, type ToastMessage } from './components/Toast';
import { InstallProgress, installApp, type InstallStep } from './install';
import { TopNav } from './components/TopNav';
import { ShopContext, ToastContext, type Notify, type ShopContextValue } from './context';
import { NavigationContext, useRouter } from './navigation';
import { AnalyticsPage } from './pages/Analytics';
import { SettingsPage } from './pages/Settings';
import { VideosPage } from './pages/Videos';
import { WidgetsPage } from './pages/Widgets';
import { hrefFor, isPlainClick, PAGES, type PageId } from './routes';
import { isEmbedded, NoSessionError, resolveShop } from './session';
import type { Shop } from './types';

type Boot =
  | { state: 'loading' }
  | { state: 'ready'; value: ShopContextValue }
  | { state: 'no-session' }
  | { state: 'not-installed' }
  | { state: 'failed'; message: string };

async function boot(onStep: (step: InstallStep) => void): Promise<Boot> {
  // The shop is asked for while the install is checked: on every open but the first, the install
  // changes nothing and the shop is the one read, a round trip sooner. A shop the service already
  // knows opens even if the install fails.
  const domain = resolveShop();
  const early = domain.then((d) => get<Shop>(shopPath(d)));
  early.catch(() => undefined);
  let installFailure: string | null = null;
  let installedNow = false;
  try {
    installedNow = await installApp(onStep);
  } catch (e) {
    if (e instanceof NoSessionError) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 401) return { state: 'no-session' };
    installFailure = e instanceof Error ? e.message : String(e);
  }
  try {
    // The early answer stands unless it was asked before this call installed the shop.
    const shop = await early.catch((e: unknown) => {
      if (installedNow || installFailure) return domain.then((d) => get<Shop>(shopPath(d)));
      throw e;
    });
    return { state: 'ready', value: { domain: await domain, shop } };
  } catch (e) {
    if (e instanceof NoSessionError) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 401) return { state: 'no-session' };
    if (e instanceof ApiError && e.status === 404) {
      return installFailure ? { state: 'failed', message: installFailure } : { state: 'not-installed' };
    }
    return { state: 'failed', message: e instanceof Error ? e.message : String(e) };
  }
}

export function App() {
  return (
    <AppProvider i18n={en}>
      <Dashboard />
    </AppProvider>
  );
}

function Dashboard() {
  const [status, setStatus] = useState<Boot>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [step, setStep] = useState<InstallStep>('connecting');

  useEffect(() => {
    let live = true;
    setStatus({ state: 'loading' });
    boot((s) => live && setStep(s)).then((b) => live && setStatus(b));
    return () => {
      live = false;
    };
  }, [attempt]);

  switch (status.state) {
    case 'loading':
      return (
        <FullPage title="videoapp">
          <InstallProgress step={step} />
        </FullPage>
      );
    case 'no-session':
      return (
        <FullPage title="videoapp">
          <Text as="p" variant="bodyLg">
            Open videoapp from your store&apos;s admin.
          </Text>
        </FullPage>
      );
    case 'not-installed':
      return (
        <FullPage title="videoapp">
          <Text as="p" variant="bodyLg">
            videoapp is not installed on this store. Install it from your store&apos;s admin, then open it again.
          </Text>
        </FullPage>
      );
    case 'failed':
      return (
        <FullPage title="videoapp">
          <Text as="p">{status.message}</Text>
          <Button onClick={() => setAttempt((a) => a + 1)}>Try again</Button>
        </FullPage>
      );
    case 'ready':
      return (
        <ShopContext.Provider value={status.value}>
          <Shell />
        </ShopContext.Provider>
      );
  }
}

/** A message that takes the whole page: there is nothing else the dashboard can show. */
function FullPage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main>
      <Page narrowWidth>
        <Card>
          <BlockStack gap="400" inlineAlign="start">
            <Text as="h1" variant="headingLg">
              {title}
            </Text>
            {children}
          </BlockStack>
        </Card>
      </Page>
    </main>
  );
}

function Shell() {
  const { navigation, visit, question } = useRouter();
  const { route, go } = navigation;
  const page = route.page;
  const [toast, setToast] = useState<ToastMessage | null>(null);
  const embedded = useMemo(isEmbedded, []);

  const onNavClick = useCallback(
    (next: PageId) => (e: MouseEvent<HTMLAnchorElement>) => {
      if (!isPlainClick(e)) return;
      e.preventDefault();
      // Every navigation opens its page afresh: "Widgets" from a widget's form goes back to the list.
      go({ page: next }, { fresh: true });
    },
    [go],
  );

  const dismiss = useCallback(() => setToast(null), []);
  const notify = useCallback<Notify>((message, options) => {
    setToast({ message, error: !!options?.error, key: Date.now() });
  }, []);

  return (
    <ToastContext.Provider value={notify}>
      <NavigationContext.Provider value={navigation}>
        <Frame>
          {embedded ? (
            <NavMenu>
              <a href={hrefFor(null)} rel="home" onClick={onNavClick('analytics')}>
                videoapp
              </a>
              {PAGES.map((p) => (
                <a key={p.id} href={hrefFor(p.id)} onClick={onNavClick(p.id)}>
                  {p.label}
                </a>
              ))}
            </NavMenu>
          ) : (
            <TopNav current={page} onNavigate={onNavClick} />
          )}
          {page === 'analytics' && <AnalyticsPage key={visit} />}
          {page === 'widgets' && <WidgetsPage key={visit} />}
          {page === 'videos' && <VideosPage key={visit} />}
          {page === 'settings' && <SettingsPage key={visit} />}
          {question}
          <Toasts toast={toast} onDismiss={dismiss} />
        </Frame>
      </NavigationContext.Provider>
    </ToastContext.Provider>
  );
}
