SELECT page, window_start, window_end, window_time, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end
