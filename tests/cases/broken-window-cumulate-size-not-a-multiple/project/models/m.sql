SELECT window_start, window_end, COUNT(*) AS views
FROM TABLE(CUMULATE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '7' MINUTE, INTERVAL '1' HOUR))
GROUP BY window_start, window_end
