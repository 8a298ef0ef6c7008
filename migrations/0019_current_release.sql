-- The current manifest's release and generation, kept on the environment
-- row beside current_manifest_id: `relctl env list` reads every
-- environment's, and at 10,000 environments joining the manifests table for
-- them cost a new session more than reading the environments themselves
-- (another 640 pages, and a hash of every manifest ever published).
-- relctl.copy_current_manifest (functions/environments.sql) fills them from
-- the manifest on every change, whoever makes it; manifests are append-only,
-- so the copy cannot go stale.
ALTER TABLE relctl.environments ADD COLUMN current_release text, ADD COLUMN current_generation bigint;
UPDATE relctl.environments e SET current_release = m.release, current_generation = m.generation
    FROM relctl.manifests m WHERE m.id = e.current_manifest_id;
ALTER TABLE relctl.environments ADD CHECK ((current_manifest_id IS NULL) = (current_release IS NULL)
                                           AND (current_manifest_id IS NULL) = (current_generation IS NULL));
