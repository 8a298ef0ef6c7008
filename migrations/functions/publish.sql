-- Publish: the write-time check. A manifest becomes current only from the
-- environment's live, unexpired lease, and only if its generation is newer
-- than the published one, decided under the environment's row lock on the
-- server's clock. Without a lease only while serialization is off.

-- A manifest at most this deep: deep nesting costs the server stack and the
-- client memory, and no deployment manifest needs it. The client checks the
-- same limit (kMaxManifestDepth) before it sends anything.
CREATE FUNCTION relctl.max_manifest_depth() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 64 $$;

-- The manifest's validation, shared by both publish paths. The text is what
-- the client sent, so its size limit is measured on that.
CREATE FUNCTION relctl.parse_manifest(p_text text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v jsonb;
BEGIN
    IF p_text IS NULL THEN
        RETURN NULL;
    END IF;
    IF octet_length(p_text) > 65536 THEN
        PERFORM relctl.invalid('a manifest may not exceed 64 KiB');
    END IF;
    BEGIN
        v := p_text::jsonb;
    EXCEPTION
        WHEN invalid_text_representation OR untranslatable_character THEN
            PERFORM relctl.invalid('the manifest is not valid JSON: ' || SQLERRM);
        WHEN statement_too_complex OR program_limit_exceeded THEN
            -- The parser recursed past the server's stack depth limit.
            PERFORM relctl.invalid(format('a manifest may be nested at most %s levels deep',
                                          relctl.max_manifest_depth()));
    END;
    IF jsonb_typeof(v) <> 'object' THEN
        PERFORM relctl.invalid('a manifest must be a JSON object');
    END IF;
    -- The top-level object is at level 0: a container at level N is the
    -- (N+1)th level of nesting.
    IF jsonb_path_exists(v, format('strict $.**{%s to last} ? (@.type() == "object" || @.type() == "array")',
                                   relctl.max_manifest_depth())::jsonpath) THEN
        PERFORM relctl.invalid(format('a manifest may be nested at most %s levels deep',
                                      relctl.max_manifest_depth()));
    END IF;
    RETURN v;
END
$$;

CREATE FUNCTION relctl.manifest_json(m relctl.manifests, p_env text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', m.id, 'env', p_env, 'release', m.release, 'generation', m.generation, 'job', m.job,
        'token', m.token, 'published_at', m.published_at, 'manifest', m.manifest)
$$;

-- Freshness: a candidate must be newer than the highest generation ever
-- accepted on the environment (its high-water mark), not merely newer than
-- the current manifest, which a rollback may have moved back.
CREATE FUNCTION relctl.is_stale(e relctl.environments, p_generation bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT p_generation <= e.high_water_generation $$;

CREATE FUNCTION relctl.stale_message(e relctl.environments, m relctl.manifests, p_release text,
                                     p_generation bigint)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN m.id IS NOT NULL AND m.generation = e.high_water_generation THEN
        format('STALE_GENERATION: generation %s of %s is not newer than generation %s (%s) published on %s',
               p_generation, p_release, m.generation, m.release, e.name)
    ELSE
        format('STALE_GENERATION: generation %s of %s is not newer than generation %s, the highest accepted on %s (rolled back to generation %s (%s) since)',
               p_generation, p_release, e.high_water_generation, e.name, m.generation, m.release)
    END
$$;

CREATE FUNCTION relctl.publish(p_env text, p_token bigint, p_lease_id uuid, p_manifest_text text,
                               p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    l relctl.leases;
    m relctl.manifests;
    published relctl.manifests;
    v_now timestamptz;
    v_reason text;
    v_trusted boolean;
    v_request jsonb;
    v_reply jsonb;
    v_gate jsonb;
    v_manifest jsonb := relctl.parse_manifest(p_manifest_text);
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_credentials(p_token, p_lease_id);
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    -- The request keeps the lease id's digest: `op show` prints requests.
    v_request := jsonb_build_object('operation', 'publish', 'env', p_env, 'token', p_token,
                                    'lease_id_sha256', relctl.lease_id_digest(p_lease_id),
                                    'manifest_md5', md5(coalesce(v_manifest::text, '')));
    v_reply := relctl.replay(p_op_id, v_request, NULL, p_client);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;

    SELECT * INTO l FROM relctl.leases WHERE env = p_env AND token = p_token;
    IF e.frozen_at IS NOT NULL THEN
        v_trusted := l.token IS NOT NULL AND l.lease_id IS NOT DISTINCT FROM p_lease_id;
        RETURN relctl.frozen_refusal(e, 'publish', CASE WHEN v_trusted THEN l.job END,
                                     CASE WHEN v_trusted THEN l.release END,
                                     CASE WHEN v_trusted THEN l.generation END, p_token, p_op_id, p_client);
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    v_now := clock_timestamp();
    v_reason := relctl.lease_refusal(e, l, p_lease_id, v_now);
    -- A stale generation outranks the lease's state: such a candidate can never
    -- become current, whatever happens to its lease, and that is what an
    -- incident reviewer needs to read first.
    IF (v_reason IS NULL OR v_reason NOT IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID'))
       AND relctl.is_stale(e, l.generation) THEN
        v_reason := 'STALE_GENERATION';
    END IF;

    IF v_reason IS NOT NULL THEN
        v_trusted := v_reason NOT IN ('UNKNOWN_LEASE', 'BAD_LEASE_ID');
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', v_reason, 'operation', 'publish', 'env', p_env,
            'token', p_token, 'current_token', e.last_token,
            'job', CASE WHEN v_trusted THEN l.job END, 'release', CASE WHEN v_trusted THEN l.release END,
            'generation', CASE WHEN v_trusted THEN l.generation END,
            'current', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
            'op_id', p_op_id, 'replayed', false,
            'high_water_generation', e.high_water_generation,
            'message', CASE WHEN v_reason = 'STALE_GENERATION'
                THEN relctl.stale_message(e, m, l.release, l.generation)
                ELSE relctl.refusal_message(v_reason, p_env, p_token) END);
        PERFORM relctl.record(p_env, 'publish', v_reason,
                              CASE WHEN v_trusted THEN l.job END, CASE WHEN v_trusted THEN l.release END,
                              CASE WHEN v_trusted THEN l.generation END, p_token, p_op_id, p_client,
                              CASE WHEN v_trusted THEN jsonb_build_object(
                                  'lease_expires_at', l.expires_at, 'lease_ended_at', l.ended_at,
                                  'lease_end_reason', l.end_reason, 'lease_ended_by', l.ended_by) END);
        PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
        RETURN v_reply;
    END IF;
    -- The promotion gate, again at the write: the upstream may have rolled the
    -- release back, or the environment's requirements changed, since acquire.
    v_gate := relctl.promotion_refusal(e, l.job, l.release, l.generation, v_now, false, p_client);
    IF v_gate IS NOT NULL THEN
        RETURN relctl.promotion_refused(e, v_gate, 'publish', l.job, l.release, l.generation, p_token, p_op_id,
                                        p_client, v_request, NULL);
    END IF;

    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id)
        VALUES (p_env, l.release, l.generation, l.job, l.token, v_now, v_manifest, p_op_id)
        RETURNING * INTO published;
    UPDATE relctl.environments SET current_manifest_id = published.id, high_water_generation = published.generation
        WHERE name = p_env;

    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'release', l.release, 'generation', l.generation,
        'job', l.job, 'token', l.token, 'published_at', v_now, 'serialized', true,
        'previous', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'publish', NULL, l.job, l.release, l.generation, l.token, p_op_id,
                          p_client, jsonb_build_object('manifest_id', published.id));
    PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- A publish without a lease: accepted only while the environment's
-- serialization is off (staged rollout), and still only when fresh.
CREATE FUNCTION relctl.publish_unserialized(p_env text, p_job text, p_release text, p_generation bigint,
                                            p_manifest_text text, p_op_id text, p_client jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
    published relctl.manifests;
    v_now timestamptz;
    v_request jsonb;
    v_reply jsonb;
    v_gate jsonb;
    v_manifest jsonb := relctl.parse_manifest(p_manifest_text);
BEGIN
    PERFORM relctl.require_read_committed();
    PERFORM relctl.require_candidate(p_job, p_release, p_generation);
    PERFORM relctl.lock_operation(p_op_id);
    e := relctl.lock_environment(p_env);
    v_request := jsonb_build_object('operation', 'publish', 'env', p_env, 'job', p_job, 'release', p_release,
                                    'generation', p_generation, 'manifest_md5', md5(coalesce(v_manifest::text, '')));
    v_reply := relctl.replay(p_op_id, v_request, NULL, p_client);
    IF v_reply IS NOT NULL THEN
        RETURN v_reply;
    END IF;
    IF e.frozen_at IS NOT NULL THEN
        RETURN relctl.frozen_refusal(e, 'publish', p_job, p_release, p_generation, NULL, p_op_id, p_client);
    END IF;
    IF e.serialization = 'enforced' THEN
        -- Not remembered: the environment's setting may change, and the same
        -- request must then be able to go through.
        PERFORM relctl.record(p_env, 'publish', 'NO_LEASE', p_job, p_release, p_generation, NULL, p_op_id,
                              p_client, jsonb_build_object('serialization', e.serialization));
        RETURN jsonb_build_object(
            'status', 'refused', 'reason', 'NO_LEASE', 'operation', 'publish', 'env', p_env, 'job', p_job,
            'release', p_release, 'generation', p_generation, 'op_id', p_op_id,
            'message', format('NO_LEASE: %s enforces serialization; publish with a lease (relctl lease acquire or relctl run)',
                              p_env));
    END IF;

    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    v_now := clock_timestamp();
    IF relctl.is_stale(e, p_generation) THEN
        v_reply := jsonb_build_object(
            'status', 'refused', 'reason', 'STALE_GENERATION', 'operation', 'publish', 'env', p_env,
            'job', p_job, 'release', p_release, 'generation', p_generation,
            'current', relctl.manifest_json(m, p_env) - 'manifest' - 'env', 'op_id', p_op_id, 'replayed', false,
            'high_water_generation', e.high_water_generation,
            'message', relctl.stale_message(e, m, p_release, p_generation));
        PERFORM relctl.record(p_env, 'publish', 'STALE_GENERATION', p_job, p_release, p_generation, NULL, p_op_id,
                              p_client, jsonb_build_object('unserialized', true));
        PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
        RETURN v_reply;
    END IF;

    v_gate := relctl.promotion_refusal(e, p_job, p_release, p_generation, v_now, true, p_client);
    IF v_gate IS NOT NULL THEN
        RETURN relctl.promotion_refused(e, v_gate, 'publish', p_job, p_release, p_generation, NULL, p_op_id,
                                        p_client, v_request, NULL);
    END IF;

    INSERT INTO relctl.manifests (env, release, generation, job, token, published_at, manifest, op_id, serialized)
        VALUES (p_env, p_release, p_generation, p_job, NULL, v_now, v_manifest, p_op_id, false)
        RETURNING * INTO published;
    UPDATE relctl.environments SET current_manifest_id = published.id, high_water_generation = published.generation
        WHERE name = p_env;
    v_reply := jsonb_build_object(
        'status', 'ok', 'env', p_env, 'release', p_release, 'generation', p_generation, 'job', p_job,
        'token', NULL, 'published_at', v_now, 'serialized', false,
        'previous', CASE WHEN m.id IS NULL THEN NULL ELSE relctl.manifest_json(m, p_env) - 'manifest' - 'env' END,
        'op_id', p_op_id, 'replayed', false);
    PERFORM relctl.record(p_env, 'publish', NULL, p_job, p_release, p_generation, NULL, p_op_id, p_client,
                          jsonb_build_object('manifest_id', published.id, 'unserialized', true));
    PERFORM relctl.remember(p_op_id, 'publish', v_request, v_reply);
    RETURN v_reply;
END
$$;

-- The current manifest with the environment's high-water generation; with
-- p_history, every manifest accepted there and every rollback, in the order
-- they happened (a rollback entry is the manifest it restored, with the
-- rollback's who, why, when and what it replaced).
CREATE FUNCTION relctl.manifest_show(p_env text, p_history boolean) RETURNS jsonb
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
DECLARE
    e relctl.environments;
    m relctl.manifests;
BEGIN
    SELECT * INTO e FROM relctl.environments WHERE name = p_env;
    IF NOT FOUND THEN
        PERFORM relctl.invalid(format('unknown environment "%s"', p_env));
    END IF;
    IF coalesce(p_history, false) THEN
        RETURN jsonb_build_object(
            'env', p_env, 'high_water_generation', e.high_water_generation,
            'current_manifest_id', e.current_manifest_id,
            'history', (
                SELECT coalesce(jsonb_agg(entry ORDER BY at, seq), '[]')
                FROM (SELECT h.published_at AS at, h.id AS seq,
                             relctl.manifest_json(h, p_env) || jsonb_build_object('kind', 'publish') AS entry
                      FROM relctl.manifests h WHERE h.env = p_env
                      UNION ALL
                      SELECT r.rolled_back_at, r.token,
                             relctl.manifest_json(h, p_env) || jsonb_build_object(
                                 'kind', 'rollback',
                                 'rollback', jsonb_build_object(
                                     'id', r.id, 'by', r.rolled_back_by, 'reason', r.reason,
                                     'at', r.rolled_back_at, 'token', r.token,
                                     'replaced', jsonb_build_object('id', x.id, 'release', x.release,
                                                                    'generation', x.generation)))
                      FROM relctl.rollbacks r
                      JOIN relctl.manifests h ON h.id = r.restored_manifest_id
                      JOIN relctl.manifests x ON x.id = r.replaced_manifest_id
                      WHERE r.env = p_env) entries));
    END IF;
    SELECT * INTO m FROM relctl.manifests WHERE id = e.current_manifest_id;
    RETURN relctl.manifest_json(m, p_env) || jsonb_build_object('high_water_generation', e.high_water_generation);
END
$$;

GRANT EXECUTE ON FUNCTION relctl.publish, relctl.publish_unserialized TO relctl_job;
GRANT EXECUTE ON FUNCTION relctl.manifest_show TO relctl_job, relctl_reviewer;
