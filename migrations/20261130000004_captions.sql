-- Captions a merchant attached to a video, one WebVTT file per language:
-- [{ "language": "en", "url": "<public URL>", "prefix": "<prefix of its object>" }], in language order.
ALTER TABLE videos ADD COLUMN captions JSONB NOT NULL DEFAULT '[]';
