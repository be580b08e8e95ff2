SELECT page, window_time AS a, window_time AS b, COUNT(*) AS n
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end, window_time
