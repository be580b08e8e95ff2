-- Strings read as timestamps with a Java pattern: a day written first, a compact date, a
-- time of day (on 1970-01-01). Where the pattern does not read a string, Flink reads it
-- as a plain SQL timestamp or date, adding up fields leniently; otherwise null.
SELECT id, note,
  TO_TIMESTAMP(note, 'dd/MM/yyyy HH:mm') AS day_first,
  TO_TIMESTAMP(note, 'yyyyMMdd') AS compact,
  TO_TIMESTAMP(note, 'HH:mm') AS clock
FROM source('events')
