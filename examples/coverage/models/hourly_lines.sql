-- GROUP BY expressions: lines per category, written in capitals, and hour they were seen;
-- the expressions are computed before the grouping.
SELECT UPPER(category) AS category, FLOOR(seen_at TO HOUR) AS hour, COUNT(*) AS lines
FROM source('events')
WHERE category IS NOT NULL AND seen_at IS NOT NULL
GROUP BY UPPER(category), FLOOR(seen_at TO HOUR)
