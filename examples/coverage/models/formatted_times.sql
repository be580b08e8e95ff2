-- Timestamps printed with Java's pattern letters, read as UTC, and a string read as a
-- timestamp by TO_TIMESTAMP, null where it does not read (as TRY_CAST).
SELECT id,
  DATE_FORMAT(seen_at, 'yyyy-MM-dd HH:mm:ss') AS full_time,
  DATE_FORMAT(seen_at, 'yy/M/d h:m:s.SSS') AS short_time,
  DATE_FORMAT(seen_at, 'DDD ''day'', hh ''o''''clock''') AS day_of_year,
  TO_TIMESTAMP(note) AS note_time
FROM source('events')
