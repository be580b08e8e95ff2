SELECT
    visitor,
    COUNT(*) AS clicks,
    COUNT(DISTINCT page) AS pages,
    MAX(clicked_at) AS last_click
FROM source('clicks')
WHERE visitor IS NOT NULL
GROUP BY visitor
