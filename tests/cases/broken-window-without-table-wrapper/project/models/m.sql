SELECT window_start, window_end, COUNT(*) AS views
FROM TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE)
GROUP BY window_start, window_end
