SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views') PARTITION BY page, DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE))
GROUP BY page, window_start, window_end
