-- Issue 20: the on-call dashboard's ways out.

-- The audit log reads newest first by time, then id, and pages on from an entry.
create index audit_log_at_id on queen.audit_log (at desc, id desc);
drop index queen.audit_log_at;
