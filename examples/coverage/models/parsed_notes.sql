-- TRY_CAST reads a string as a number, a timestamp or a boolean, and gives null where CAST
-- would stop the run.
SELECT id,
  TRY_CAST(note AS INT) AS note_int,
  TRY_CAST(note AS DOUBLE) AS note_double,
  TRY_CAST(note AS TIMESTAMP) AS note_time,
  TRY_CAST(note AS BOOLEAN) AS note_flag
FROM source('events')
