SELECT
    id,
    seen_at,
    seen_at >= TIMESTAMP '2026-08-30 10:00:00' AS after_ten,
    seen_at BETWEEN TIMESTAMP '2026-08-30 00:00:00' AND CAST('2026-08-30 23:59:59.999' AS TIMESTAMP) AS on_the_day,
    CAST(seen_at AS STRING) AS seen_text,
    CAST(note AS TIMESTAMP) AS noted_at,
    EXTRACT(YEAR FROM seen_at) AS y,
    EXTRACT(MONTH FROM seen_at) AS mo,
    EXTRACT(DAY FROM seen_at) AS d,
    EXTRACT(HOUR FROM seen_at) AS h,
    EXTRACT(MINUTE FROM seen_at) AS mi,
    EXTRACT(SECOND FROM seen_at) AS s,
    EXTRACT(DOW FROM seen_at) AS dow
FROM source('events')
WHERE seen_at IS NOT NULL
