SELECT window_start, window_end, MAX(window_time) AS last
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
