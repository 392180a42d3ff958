-- queen_streams.register takes the caller (sql/functions/streams.sql): a reset through
-- registration is audited. The five-argument signature it replaces goes.
drop function if exists queen_streams.register(text, text, text, text, boolean);
-- queen.seek_preview answers a page of partitions (p_after, p_limit): the signature it replaces goes.
drop function if exists queen.seek_preview(text, text, text, boolean, timestamptz);
