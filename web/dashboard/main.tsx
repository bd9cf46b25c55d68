/** The merchant's dashboard: mounts into the service's `<div id="app">`. */
import { createRoot } from 'react-dom/client';

import { App } from './app';
import { withoutLaunchParameters } from './routes';
import { sessionToken } from './session';

// The first call needs a session token: asked for now, while React and Polaris set up, rather
// than once the app has mounted. A failure is the app's to report when it asks again.
sessionToken().catch(() => undefined);
// The admin's launch token has been read: it leaves the address bar.
const address = withoutLaunchParameters();
if (address !== location.pathname + location.search + location.hash) history.replaceState(history.state, '', address);

const root = document.getElementById('app');
if (root) createRoot(root).render(<App />);
