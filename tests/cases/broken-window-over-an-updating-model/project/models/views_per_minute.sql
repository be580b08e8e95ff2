SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE ref('latest_view'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end
