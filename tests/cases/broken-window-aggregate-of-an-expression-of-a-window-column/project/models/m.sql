SELECT page, window_start, window_end, MIN(COALESCE(window_start, viewed_at)) AS first_seen
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end
