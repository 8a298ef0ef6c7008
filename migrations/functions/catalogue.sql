-- The protocol's vocabulary as the database knows it: the same lists as
-- core/include/relctl/catalogue.h (tests/test_security.cpp compares them).
-- record() refuses anything else, so a reason or an operation cannot reach
-- the audit trail without being added to both.

CREATE FUNCTION relctl.refusal_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['STALE_GENERATION', 'SUPERSEDED', 'LEASE_EXPIRED', 'LEASE_SUPERSEDED', 'LEASE_RELEASED',
                 'LEASE_REVOKED', 'BAD_LEASE_ID', 'UNKNOWN_LEASE', 'REQUEST_SECRET_MISMATCH',
                 'DISPATCH_FROZEN', 'NO_LEASE', 'NOT_PROMOTED', 'APPROVAL_REQUIRED', 'APPROVAL_DENIED',
                 'SELF_APPROVAL', 'NOT_APPROVER', 'DUPLICATE_APPROVAL', 'QUEUE_FULL', 'NOT_OWN_CANDIDATE',
                 'CANDIDATE_DROPPED', 'OP_ID_CONFLICT', 'PROMOTIONS_FULL']
$$;

CREATE FUNCTION relctl.audited_operations() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['acquire', 'renew', 'release', 'publish', 'revoke', 'freeze', 'unfreeze', 'approve', 'deny',
                 'env-add', 'env-set', 'supersession-requested', 'promotion-requested', 'promotion-approve',
                 'promotion-deny', 'rollback', 'queue-drop', 'session-ended', 'refusals-unrecorded']
$$;
