-- What became of a job or an op id (functions/status.sql) is looked up by the
-- job's and the op id's candidates, without reading the whole queue history.
CREATE INDEX candidates_job ON relctl.candidates (job, id);
CREATE INDEX candidates_op_id ON relctl.candidates (op_id) WHERE op_id IS NOT NULL;
