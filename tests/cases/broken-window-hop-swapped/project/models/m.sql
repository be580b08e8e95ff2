SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(HOP(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE, INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end
