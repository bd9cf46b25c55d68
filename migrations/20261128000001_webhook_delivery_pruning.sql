-- Deliveries whose work ended (done, or given up) are deleted once they are older than the
-- retention; this finds them without reading the deliveries still to do.
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries ((coalesce(done_at, failed_at)))
    WHERE done_at IS NOT NULL OR failed_at IS NOT NULL;
