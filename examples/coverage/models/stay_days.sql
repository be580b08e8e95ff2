-- Dates: a date column as it is, printed, compared with a DATE literal, its fields, its
-- midnight; a timestamp's date, and a string read as a date (null where it does not read,
-- with TRY_CAST).
SELECT guest, arrive_on,
  CAST(arrive_on AS STRING) AS arrive_text,
  arrive_on >= DATE '2026-09-01' AS from_september,
  EXTRACT(YEAR FROM arrive_on) AS arrive_year,
  EXTRACT(DOW FROM arrive_on) AS arrive_dow,
  CAST(arrive_on AS TIMESTAMP) AS arrive_midnight,
  CAST(booked_at AS DATE) AS booked_on,
  TRY_CAST(note AS DATE) AS noted_on
FROM source('stays')
