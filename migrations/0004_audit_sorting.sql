-- The audit browser sorts on the server: relctl.console_audit in
-- migrations/functions/console.sql. This migration replaced that function
-- before functions moved out of the numbered migrations, and adds nothing.
SELECT 1;
