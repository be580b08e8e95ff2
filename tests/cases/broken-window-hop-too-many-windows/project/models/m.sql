SELECT window_start, window_end, COUNT(*) AS views
FROM TABLE(HOP(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '0.001' SECOND, INTERVAL '999' DAY))
GROUP BY window_start, window_end
