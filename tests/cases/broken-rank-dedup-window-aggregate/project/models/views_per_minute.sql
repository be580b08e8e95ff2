SELECT window_start AS minute, window_end AS minute_end, window_time AS minute_time, page, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, window_time, page
