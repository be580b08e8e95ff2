SELECT window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE, INTERVAL '10' SECOND))
GROUP BY window_start, window_end
