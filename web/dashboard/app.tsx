/** The dashboard's frame: the shop, the navigation between the four pages, and toasts. */
import { NavMenu } from '@shopify/app-bridge-react';
import { AppProvider, BlockStack, Button, Card, Frame, Page, Text } from '@shopify/polaris';
import en from '@shopify/polaris/locales/en.json';
import { useCallback, useEffect, useMemo, useState, type MouseEvent, type ReactNode } from 'react';

import { Toasts, type ToastMessage } from './components/Toast';
import { startBoot, type Boot, type Booting, type InstallStep } from './boot';
import { InstallProgress } from './install';
import { TopNav } from './components/TopNav';
import { ShopContext, ToastContext, type Notify, type OpenedShop } from './context';
import { NavigationContext, useRouter } from './navigation';
import { AnalyticsPage } from './pages/Analytics';
import { SettingsPage } from './pages/Settings';
import { VideosPage } from './pages/Videos';
import { WidgetsPage } from './pages/Widgets';
import { hrefFor, isPlainClick, PAGES, type PageId } from './routes';
import { isEmbedded } from './session';

/** `first` is the boot started as the bundle ran, before React's first render; "Try again" boots afresh. */
export function App({ first }: { first: Booting }) {
  return (
    <AppProvider i18n={en}>
      <Dashboard first={first} />
    </AppProvider>
  );
}

function Dashboard({ first }: { first: Booting }) {
  const [status, setStatus] = useState<Boot>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [step, setStep] = useState<InstallStep>('connecting');

  useEffect(() => {
    let live = true;
    setStatus({ state: 'loading' });
    const booting = attempt === 0 ? first : startBoot();
    setStep(booting.step);
    booting.onStep = (s) => live && setStep(s);
    booting.result.then((b) => live && setStatus(b));
    return () => {
      live = false;
    };
  }, [attempt, first]);

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
        <ShopProvider opened={status.value}>
          <Shell />
        </ShopProvider>
      );
  }
}

/** The shop every page reads: the one the dashboard opened with, then as its last change left it. */
function ShopProvider({ opened, children }: { opened: OpenedShop; children: ReactNode }) {
  const [shop, setShop] = useState(opened.shop);
  const value = useMemo(() => ({ domain: opened.domain, shop, shopChanged: setShop }), [opened.domain, shop]);
  return <ShopContext.Provider value={value}>{children}</ShopContext.Provider>;
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
