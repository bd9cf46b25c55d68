-- A fourth kind of widget: a small round preview fixed in a corner of the page.
ALTER TABLE widgets DROP CONSTRAINT widgets_type_check;
ALTER TABLE widgets ADD CONSTRAINT widgets_type_check
    CHECK (type IN ('carousel', 'story', 'productpage', 'floating'));
