SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(SESSION(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE))
GROUP BY page, window_start, window_end
