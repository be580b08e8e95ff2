SELECT page, COUNT(*) AS views
FROM source('page_views')
GROUP BY page, TUMBLE(viewed_at, INTERVAL '1' MINUTE)
