/** The merchant's dashboard: mounts into the service's `<div id="app">`. */
import { createRoot } from 'react-dom/client';

import { App } from './app';

const root = document.getElementById('app');
if (root) createRoot(root).render(<App />);
