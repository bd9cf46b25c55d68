/** `boot.js`: the dashboard's first calls, started before the bundle has loaded (see boot.ts). */
import { startBoot } from './boot';

window.videoappBoot ??= startBoot();
