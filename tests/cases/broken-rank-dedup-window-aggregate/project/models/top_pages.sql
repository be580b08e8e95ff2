-- The first page counted in each minute: which of a minute's rows comes first is Flink's.
SELECT minute, minute_end, page, views
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY minute, minute_end ORDER BY minute_time) AS rn
    FROM ref('views_per_minute')
)
WHERE rn = 1
