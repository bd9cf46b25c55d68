/**
 * What the player asset uses of the initial loader: its event queue and history live there,
 * once per page, so the player is handed them instead of bundling a second copy.
 */
import type { openings, remember, track } from './events';

export const host = {} as { track: typeof track; remember: typeof remember; openings: typeof openings };
