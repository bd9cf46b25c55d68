/**
 * The loader's style sheet, added once to <head>. Every selector is under a `videoapp-` class;
 * themes adjust it through the custom properties documented in docs/STOREFRONT-CLIENT.md.
 */
const A = 'var(--videoapp-accent,#111)';
const R = 'var(--videoapp-radius,12px)';
const W = 'var(--videoapp-card-width,160px)';

export const CSS = `
.videoapp-widget{--videoapp-w:${W};margin:16px 0}
.videoapp-widget--compact{--videoapp-w:calc(${W}*.75)}
.videoapp-widget--large{--videoapp-w:calc(${W}*1.375)}
.videoapp-title{margin:0 0 8px;font-size:1.25em}
.videoapp-track{display:flex;gap:var(--videoapp-gap,12px);overflow-x:auto;list-style:none;margin:0;padding:4px}
.videoapp-widget--productpage .videoapp-track{flex-wrap:wrap;overflow:visible}
.videoapp-item{position:relative;flex:0 0 var(--videoapp-w)}
.videoapp-card{display:block;width:100%;padding:0;border:0;background:none;color:inherit;font:inherit;text-align:left;cursor:pointer}
.videoapp-card:focus-visible,.videoapp-dismiss:focus-visible{outline:2px solid ${A};outline-offset:2px}
.videoapp-media{position:relative;display:block;aspect-ratio:9/16;border-radius:${R};overflow:hidden;background:#8882}
.videoapp-media img,.videoapp-preview,.videoapp-inline{position:absolute;top:0;left:0;width:100%;height:100%;object-fit:cover}
.videoapp-inline{z-index:2;height:auto;aspect-ratio:9/16;border-radius:${R};background:#000}
.videoapp-name{display:block;margin-top:6px;font-size:.875em;line-height:1.3}
.videoapp-dur{position:absolute;z-index:1;right:6px;bottom:6px;padding:1px 6px;border-radius:8px;background:#000a;color:#fff;font-size:12px}
.videoapp-widget--story .videoapp-item{flex-basis:calc(var(--videoapp-w)*.5)}
.videoapp-widget--story .videoapp-media{aspect-ratio:1;border-radius:50%;margin:3px;box-shadow:0 0 0 2px var(--videoapp-accent,#d6246e)}
.videoapp-widget--story .videoapp-name{text-align:center;font-size:.75em}
.videoapp-brand{margin:6px 0 0;font-size:11px;opacity:.6}
.videoapp-widget--floating{position:fixed;z-index:2147482000;bottom:16px;right:16px;margin:0}
.videoapp-widget--floating[data-videoapp-corner=left]{right:auto;left:16px}
.videoapp-widget--floating[data-videoapp-covering]{visibility:hidden}
.videoapp-widget--floating .videoapp-track{padding:0;overflow:visible}
.videoapp-widget--floating .videoapp-item{flex:0 0 80px}
.videoapp-widget--floating .videoapp-media{aspect-ratio:1;border-radius:50%;box-shadow:0 2px 10px #0006,0 0 0 3px #fff}
.videoapp-widget--floating .videoapp-name{display:none}
.videoapp-dismiss{position:absolute;z-index:1;top:-8px;right:-8px;width:28px;height:28px;padding:0;border:0;border-radius:50%;background:#111;color:#fff;font:18px/1 sans-serif;cursor:pointer}
`;
