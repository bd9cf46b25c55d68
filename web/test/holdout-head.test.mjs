// The holdout's decision in the page's head (loader/holdout-main.ts): the browser's group drawn
// or read back before the body is parsed, and every slot taken off the page of a browser held
// out. Each "page" runs the script afresh over the same storage, as the next page view would.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { importTs, MemoryStorage } from './typescript.mjs';

const HEAD = new URL('../loader/holdout-main.ts', import.meta.url);
const GROUP_KEY = 'videoapp:group';
const saved = {};
let page;

/** A page whose embed renders the holdout `percent`, and whose first draw is `draw`. */
async function open(percent, draw) {
  const classes = new Set();
  const appended = [];
  page = { classes, appended };
  globalThis.document = {
    currentScript: { getAttribute: (name) => (name === 'data-videoapp-holdout' ? String(percent) : null) },
    documentElement: { classList: { add: (c) => classes.add(c) } },
    createElement: (tag) => ({ tag, textContent: '' }),
    head: { append: (el) => appended.push(el) },
  };
  Math.random = () => draw;
  await importTs(HEAD);
  return page;
}

const kept = () => JSON.parse(globalThis.localStorage.getItem(GROUP_KEY) || 'null');

describe("the holdout's decision in the page's head", () => {
  beforeEach(() => {
    for (const name of ['document', 'localStorage']) saved[name] = Object.getOwnPropertyDescriptor(globalThis, name);
    saved.random = Math.random;
    Object.defineProperty(globalThis, 'localStorage', { value: new MemoryStorage(), configurable: true, writable: true });
  });
  afterEach(() => {
    for (const [name, d] of Object.entries(saved)) {
      if (name === 'random') Math.random = d;
      else if (d) Object.defineProperty(globalThis, name, d);
      else delete globalThis[name];
    }
  });

  it('holds out a browser whose draw falls under the percent: the class, the style, the group kept', async () => {
    const { classes, appended } = await open(20, 0.19);
    assert.deepEqual([...classes], ['videoapp-holdout']);
    assert.equal(appended.length, 1);
    assert.equal(appended[0].tag, 'style');
    assert.equal(appended[0].textContent, 'html.videoapp-holdout [data-videoapp-slot]{display:none!important}');
    assert.equal(kept().g, 'holdout');
  });

  it('leaves a browser whose draw is the percent or above exposed, and its page as it is', async () => {
    const { classes, appended } = await open(20, 0.2);
    assert.deepEqual([...classes], []);
    assert.deepEqual(appended, []);
    assert.equal(kept().g, 'exposed');
  });

  it('reads a kept group back on the next pages, whatever they draw', async () => {
    await open(20, 0.01);
    const drawn = kept();
    for (const draw of [0.99, 0.5]) {
      const { classes } = await open(20, draw);
      assert.deepEqual([...classes], ['videoapp-holdout']);
      assert.deepEqual(kept(), drawn, 'the group and its date are kept');
    }
  });

  it('holds out no browser whose storage does not keep the group', async () => {
    const forgetful = new MemoryStorage();
    forgetful.setItem = () => {};
    globalThis.localStorage = forgetful;
    const { classes } = await open(50, 0.01);
    assert.deepEqual([...classes], []);
    const blocked = {
      getItem() {
        throw new Error('SecurityError');
      },
    };
    globalThis.localStorage = blocked;
    const second = await open(50, 0.01);
    assert.deepEqual([...second.classes], []);
  });

  it('does nothing for a percent that is no holdout', async () => {
    for (const percent of [0, 'abc', -5]) {
      const { classes, appended } = await open(percent, 0.001);
      assert.deepEqual([...classes], []);
      assert.deepEqual(appended, []);
      assert.equal(kept(), null);
    }
  });
});
