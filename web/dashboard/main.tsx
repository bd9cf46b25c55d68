/** The merchant's dashboard: mounts into the service's `<div id="app">`. */
import { createRoot } from 'react-dom/client';

import { adoptEarlyAnswers } from './api';
import { App } from './app';
import { startBoot } from './boot';
import { withoutLaunchParameters } from './routes';

// The first calls (the install, the shop, the home page's data) were started by boot.js, which
// the shell loads beside this bundle; should it not have run yet, they go out now, while React and
// Polaris set up. Either way this bundle's API client takes the answers asked for early.
const first = (window.videoappBoot ??= startBoot());
adoptEarlyAnswers(first.answers);
// The admin's launch token has been read: it leaves the address bar.
const address = withoutLaunchParameters();
if (address !== location.pathname + location.search + location.hash) history.replaceState(history.state, '', address);

const root = document.getElementById('app');
if (root) createRoot(root).render(<App first={first} />);
