-- Page views and distinct visitors per page and minute: one final row per page and
-- minute, written when the watermark passes the minute's end.
SELECT page, window_start, window_end,
       COUNT(*) AS views,
       COUNT(DISTINCT user_id) AS visitors
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE))
GROUP BY page, window_start, window_end
