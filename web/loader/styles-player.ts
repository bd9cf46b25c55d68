/** The player's style sheet, added once by the player asset; see ./styles.ts for the rules. */
const A = 'var(--videoapp-accent,#111)';
const R = 'var(--videoapp-radius,12px)';

export const PLAYER_CSS = `
.videoapp-overlay button:focus-visible{outline:2px solid ${A};outline-offset:2px}
.videoapp-overlay{position:fixed;inset:0;z-index:2147483000;display:flex;align-items:center;justify-content:center;padding:16px;background:#000c}
.videoapp-dialog{position:relative;display:flex;flex-direction:column;width:min(420px,100%);max-height:100%;overflow:auto;background:var(--videoapp-background,#fff);color:var(--videoapp-text,#111);border-radius:${R}}
.videoapp-layout--horizontal .videoapp-dialog{flex-direction:row;width:min(860px,100%)}
.videoapp-overlay--full{padding:0}
.videoapp-overlay--full .videoapp-dialog{width:100%;height:100%;border-radius:0}
.videoapp-stage{position:relative;flex:1;display:flex;align-items:center;background:#000}
.videoapp-video{display:block;width:100%;max-height:75vh;aspect-ratio:9/16}
.videoapp-overlay--full .videoapp-video{max-height:100vh;height:100%}
.videoapp-close,.videoapp-mute,.videoapp-cc,.videoapp-prev,.videoapp-next{position:absolute;z-index:1;display:flex;align-items:center;justify-content:center;width:44px;height:44px;padding:0;border:0;border-radius:50%;background:#000a;color:#fff;font-size:24px;line-height:1;cursor:pointer}
.videoapp-close{top:8px;right:8px}
.videoapp-mute{top:8px;left:8px}
.videoapp-cc{top:8px;left:60px;font:700 13px/1 sans-serif}
.videoapp-cc[aria-pressed=false]{opacity:.7;text-decoration:line-through}
.videoapp-cc[hidden]{display:none}
.videoapp-bars{position:absolute;z-index:2;top:6px;left:8px;right:8px;display:flex;gap:4px}
.videoapp-bar{flex:1;height:3px;border-radius:2px;background:#fff6;overflow:hidden}
.videoapp-bar i{display:block;height:100%;width:0;background:#fff}
.videoapp-overlay--story .videoapp-close,.videoapp-overlay--story .videoapp-mute,.videoapp-overlay--story .videoapp-cc{top:16px}
.videoapp-overlay--story .videoapp-stage{cursor:pointer;touch-action:pan-y}
.videoapp-mute[aria-pressed=true] .videoapp-on,.videoapp-mute[aria-pressed=false] .videoapp-off{display:none}
.videoapp-prev,.videoapp-next{top:50%;margin-top:-22px}
.videoapp-prev{left:8px}
.videoapp-next{right:8px}
.videoapp-products{list-style:none;margin:0;padding:12px;display:grid;gap:12px}
.videoapp-layout--horizontal .videoapp-products{flex:0 0 280px;align-content:start;overflow:auto}
.videoapp-product{display:grid;grid-template-columns:64px minmax(0,1fr);gap:4px 12px;align-items:center}
.videoapp-product>*{grid-column:2}
.videoapp-product img{grid-column:1;grid-row:1/span 5;align-self:start;width:64px;height:64px;object-fit:cover;border-radius:8px}
.videoapp-pname{color:inherit;font-weight:600}
.videoapp-pick:empty,.videoapp-price:empty,.videoapp-viewcart[hidden]{display:none}
.videoapp-variant{min-height:44px;max-width:100%;padding:0 8px;border:1px solid #888;border-radius:8px;background:inherit;color:inherit;font:inherit}
.videoapp-actions{display:flex;flex-wrap:wrap;gap:8px}
.videoapp-btn,.videoapp-viewcart{min-width:44px;min-height:44px;padding:0 16px;border:0;border-radius:${R};background:${A};color:#fff;font:inherit;cursor:pointer}
.videoapp-viewcart{display:inline-flex;align-items:center;border:1px solid;background:none;color:inherit;text-decoration:none}
.videoapp-btn[aria-disabled=true]{opacity:.6;cursor:default}
.videoapp-status{font-size:.875em;min-height:1.5em}
@media (max-width:600px){
.videoapp-overlay{padding:0}
.videoapp-overlay .videoapp-dialog{flex-direction:column;width:100%;height:100%;max-height:none;border-radius:0;overflow:hidden}
.videoapp-stage{flex:1 1 0;min-height:0}
.videoapp-overlay .videoapp-video{position:absolute;inset:0;width:100%;height:100%;max-height:none;aspect-ratio:auto}
.videoapp-overlay .videoapp-products{flex:0 0 auto;max-height:45%;overflow:auto}
}
`;
