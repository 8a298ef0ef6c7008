-- The cap on open promotion requests is counted per login
-- (relctl.promotions_full): the login's open requests, read by an index
-- rather than by every request ever opened.
CREATE INDEX promotions_open_login ON relctl.promotions (requested_login) WHERE state = 'open';
