-- Issue 34: queen.configure_queue takes the operator's reason (the dashboard's Configure asks for
-- one; Queen's clients send none) and writes it to its queue.configure audit row. The signature it
-- replaces goes; the new parameter has a default, so an older instance's calls still resolve.
drop function if exists queen.configure_queue(text, text, text, jsonb, text);
