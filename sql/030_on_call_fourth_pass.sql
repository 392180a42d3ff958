-- Issue 34. queen.set_aside takes p_hold (a refused way out holds the cursor so the same confirm
-- wins against a consumer that re-claims the message every few seconds); the signature it
-- replaces goes. The new parameter has a default, so an older instance's calls still resolve.
drop function if exists queen.set_aside(uuid, text, text, boolean, uuid, text, text, text);
-- queen.configure_queue and queen.delete_queue take the caller (and the delete a reason) and audit
-- what they changed; the signatures they replace go (the new parameters have defaults).
drop function if exists queen.configure_queue(text, text, text, jsonb);
drop function if exists queen.delete_queue(text);
