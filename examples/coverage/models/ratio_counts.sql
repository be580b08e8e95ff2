SELECT ratio, COUNT(*) AS n
FROM source('events')
WHERE ratio IS NOT NULL
GROUP BY ratio
