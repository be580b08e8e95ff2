SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
WHERE window_start > TIMESTAMP '2026-01-01 00:00:00'
GROUP BY page, window_start, window_end
