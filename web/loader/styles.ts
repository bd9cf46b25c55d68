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
.videoapp-card:focus-visible,.videoapp-overlay button:focus-visible{outline:2px solid ${A};outline-offset:2px}
.videoapp-media{position:relative;display:block;aspect-ratio:9/16;border-radius:${R};overflow:hidden;background:#8882}
.videoapp-media img,.videoapp-preview,.videoapp-inline{position:absolute;top:0;left:0;width:100%;height:100%;object-fit:cover}
.videoapp-inline{z-index:2;height:auto;aspect-ratio:9/16;border-radius:${R};background:#000}
.videoapp-name{display:block;margin-top:6px;font-size:.875em;line-height:1.3}
.videoapp-dur{position:absolute;z-index:1;right:6px;bottom:6px;padding:1px 6px;border-radius:8px;background:#000a;color:#fff;font-size:12px}
.videoapp-widget--story .videoapp-item{flex-basis:calc(var(--videoapp-w)*.5)}
.videoapp-widget--story .videoapp-media{aspect-ratio:1;border-radius:50%;margin:3px;box-shadow:0 0 0 2px var(--videoapp-accent,#d6246e)}
.videoapp-widget--story .videoapp-name{text-align:center;font-size:.75em}
.videoapp-brand{margin:6px 0 0;font-size:11px;opacity:.6}
.videoapp-overlay{position:fixed;inset:0;z-index:2147483000;display:flex;align-items:center;justify-content:center;padding:16px;background:#000c}
.videoapp-dialog{position:relative;display:flex;flex-direction:column;width:min(420px,100%);max-height:100%;overflow:auto;background:var(--videoapp-background,#fff);color:var(--videoapp-text,#111);border-radius:${R}}
.videoapp-layout--horizontal .videoapp-dialog{flex-direction:row;width:min(860px,100%)}
.videoapp-overlay--full{padding:0}
.videoapp-overlay--full .videoapp-dialog{width:100%;height:100%;border-radius:0}
.videoapp-stage{position:relative;flex:1;display:flex;align-items:center;background:#000}
.videoapp-video{display:block;width:100%;max-height:75vh;aspect-ratio:9/16}
.videoapp-overlay--full .videoapp-video{max-height:100vh;height:100%}
.videoapp-close,.videoapp-prev,.videoapp-next{position:absolute;z-index:1;width:40px;height:40px;border:0;border-radius:50%;background:#000a;color:#fff;font-size:24px;line-height:1;cursor:pointer}
.videoapp-close{top:8px;right:8px}
.videoapp-prev,.videoapp-next{top:50%;margin-top:-20px}
.videoapp-prev{left:8px}
.videoapp-next{right:8px}
.videoapp-products{list-style:none;margin:0;padding:12px;display:grid;gap:12px}
.videoapp-layout--horizontal .videoapp-products{flex:0 0 280px;align-content:start;overflow:auto}
.videoapp-product{display:grid;grid-template-columns:64px 1fr;gap:4px 12px;align-items:center}
.videoapp-product img{grid-row:span 3;width:64px;height:64px;object-fit:cover;border-radius:8px}
.videoapp-pname{color:inherit;font-weight:600}
.videoapp-btn{justify-self:start;padding:8px 14px;border:0;border-radius:${R};background:${A};color:#fff;font:inherit;cursor:pointer}
.videoapp-btn[aria-disabled=true]{opacity:.6;cursor:default}
.videoapp-status{font-size:.875em}
`;
