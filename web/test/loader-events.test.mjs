// The loader's events under a holdout (loader/events.ts): the group on every event, and one
// `session` event per tab session, with consent. Each "page" is a fresh instance of the module
// over the same storage, as the storefront's next page view would be.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { importTs, MemoryStorage } from './typescript.mjs';

const EVENTS = new URL('../loader/events.ts', import.meta.url);
const QUEUE_KEY = 'videoapp:queue';
const HERE = { placement: 'product', country: 'US', source: 'email' };

/** What the loader touches of a browser page; `consent` is the Customer Privacy API's answer. */
const browser = { consent: true, documentListeners: {} };
const saved = {};

function page() {
  browser.documentListeners = {};
  return importTs(EVENTS);
}

/** A new tab: its own sessionStorage, the same localStorage. */
function newTab() {
  window.sessionStorage = new MemoryStorage();
}

const queued = () => JSON.parse(window.localStorage.getItem(QUEUE_KEY) || '[]').map((i) => i.e);
const sessions = () => queued().filter((e) => e.eventType === 'session');

before(() => {
  for (const name of ['window', 'document', 'location', 'navigator', 'setTimeout', 'fetch']) {
    saved[name] = Object.getOwnPropertyDescriptor(globalThis, name);
  }
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  define('window', {
    localStorage: new MemoryStorage(),
    sessionStorage: new MemoryStorage(),
    Shopify: { customerPrivacy: { analyticsProcessingAllowed: () => browser.consent } },
    addEventListener() {},
  });
  define('document', {
    referrer: '',
    visibilityState: 'visible',
    addEventListener: (type, f) => (browser.documentListeners[type] = f),
  });
  define('location', { href: 'https://shop.example/products/linen-shirt?utm_medium=email' });
  define('navigator', { onLine: true, sendBeacon: () => true });
  // Nothing leaves the page here: sends are timed, and the timers never fire.
  define('setTimeout', () => 1);
  // A send that never answers: the events stay queued, where the tests read them.
  define('fetch', () => new Promise(() => {}));
});

after(() => {
  for (const [name, descriptor] of Object.entries(saved)) {
    if (descriptor) Object.defineProperty(globalThis, name, descriptor);
    else delete globalThis[name];
  }
});

beforeEach(() => {
  browser.consent = true;
  window.localStorage = new MemoryStorage();
  newTab();
});

describe('the loader under a holdout', () => {
  it('sends one session event per tab session, with the group and the where and who', async () => {
    let events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('exposed');
    // The page's answer confirms the group: still one.
    events.joinGroup('exposed');
    assert.equal(sessions().length, 1);
    const [session] = sessions();
    assert.deepEqual(Object.keys(session).sort(), [
      'country',
      'eventId',
      'eventType',
      'group',
      'placement',
      'sessionId',
      'source',
      'timestamp',
    ]);
    assert.equal(session.group, 'exposed');
    assert.equal(session.sessionId, window.sessionStorage.getItem('videoapp:session'));
    assert.deepEqual({ placement: session.placement, country: session.country, source: session.source }, HERE);

    events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('exposed');
    assert.equal(sessions().length, 1, 'the next page of the session counts nothing');

    newTab();
    events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('exposed');
    assert.equal(sessions().length, 2, 'a new tab is a new session');
    assert.notEqual(sessions()[0].sessionId, sessions()[1].sessionId);
  });

  it('counts a holdout session alike', async () => {
    const events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('holdout');
    assert.deepEqual(
      sessions().map((e) => e.group),
      ['holdout'],
    );
  });

  it('puts the group on every event, and none once the holdout is off', async () => {
    const events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('exposed');
    events.track('impression', 'w1', 'v1');
    events.track('add_to_cart', 'w1', 'v1', { productId: 'gid://shopify/Product/1', attributionType: 'direct' });
    events.joinGroup(undefined);
    events.track('click', 'w1', 'v1');
    const groups = queued().map((e) => [e.eventType, e.group]);
    assert.deepEqual(groups, [
      ['session', 'exposed'],
      ['impression', 'exposed'],
      ['add_to_cart', 'exposed'],
      ['click', undefined],
    ]);
    assert.ok(!('group' in queued()[3]), 'no group field at all');
  });

  it('sends no session event without a group', async () => {
    const events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup(undefined);
    events.track('impression', 'w1', 'v1');
    assert.deepEqual(
      queued().map((e) => e.eventType),
      ['impression'],
    );
  });

  it('counts the session once consent is given, on the page or a later one', async () => {
    browser.consent = false;
    let events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('holdout');
    assert.equal(queued().length, 0, 'nothing without consent');
    browser.consent = true;
    browser.documentListeners.visitorConsentCollected();
    assert.equal(sessions().length, 1);
    browser.documentListeners.visitorConsentCollected();
    assert.equal(sessions().length, 1);

    newTab();
    browser.consent = false;
    events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('holdout');
    browser.consent = true;
    events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('holdout');
    assert.equal(sessions().length, 2, 'the first page with consent counts it');
  });

  it('counts nothing where the tab cannot keep its mark', async () => {
    window.sessionStorage.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    const events = await page();
    events.startEvents('/apps/videoapp_sub', HERE);
    events.joinGroup('exposed');
    events.joinGroup('exposed');
    assert.equal(sessions().length, 0);
  });
});
