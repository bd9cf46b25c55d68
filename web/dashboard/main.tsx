/** The merchant's dashboard: mounts into the service's `<div id="app">`. */
import { createRoot } from 'react-dom/client';

import { App } from './app';
import { sessionToken } from './session';

// The first call needs a session token: asked for now, while React and Polaris set up, rather
// than once the app has mounted. A failure is the app's to report when it asks again.
sessionToken().catch(() => undefined);

const root = document.getElementById('app');
if (root) createRoot(root).render(<App />);
