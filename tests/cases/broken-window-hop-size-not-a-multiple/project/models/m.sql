SELECT window_start, window_end, COUNT(*) AS views
FROM TABLE(HOP(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '3' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end
