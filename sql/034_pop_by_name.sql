-- Issue 31: queen.pop and queen.pop_or_why are called by name, and every argument but the lease id
-- has a default (sql/functions/pop.sql), so a new parameter needs no shim. Their new signature takes
-- the lease id first, which also keeps a positional call of 0.1.0's queen.pop (14 arguments, its
-- own signature, still defined) from matching two functions. The 15-argument signatures they
-- replace go; no landed release calls them (0.1.0 calls the 14-argument pop).
drop function if exists queen.pop(text, text, text, text, text, integer, integer, boolean, integer, uuid, text,
                                  timestamptz, text, boolean, text);
drop function if exists queen.pop_or_why(text, text, text, text, text, integer, integer, boolean, integer, uuid,
                                         text, timestamptz, text, boolean, text);
