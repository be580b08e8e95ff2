SELECT minute, minute_end, rn, page, views
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY minute, minute_end ORDER BY views DESC) AS rn
    FROM ref('views_per_minute')
)
WHERE rn <= 2
