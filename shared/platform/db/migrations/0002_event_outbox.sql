-- Transactional outbox of the events table: a row is written in the same transaction as
-- its event and deleted by the relay once the event is on the `events` stream. An event
-- committed is therefore always published, even if the writer dies right after COMMIT.
CREATE TABLE event_outbox (
  event_id bigint PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
  org_id bigint NOT NULL
);
