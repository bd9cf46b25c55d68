-- When the store's pages first asked for widgets: the app embed is on. The first-run checklist
-- ticks its first step from it.
ALTER TABLE shops ADD COLUMN storefront_seen_at TIMESTAMPTZ;
